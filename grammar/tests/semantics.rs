//! Snapshot tests for the static-semantics diagnostics (names, types,
//! definitions, shadowed mapping rules), with fixes applied and re-checked.

mod common;

case!(
    undefined_name_with_suggestion,
    "mgpu = Machine(GPU);\ndef f(Task t) { return mgp[0, 0]; }\nIndexTaskMap * f;\n"
);
case!(missing_mgpu_definition, "Task * GPU;\ndef f(Task t) { return mgpu[t.ipoint[0] % mgpu.size[0], 0]; }\nIndexTaskMap * f;\n");
case!(
    index_task_map_function_undefined,
    "def block1d(Task t) { return m[0, 0]; }\nm = Machine(GPU);\nIndexTaskMap * block2d;\n"
);
case!(
    index_task_map_function_defined_later,
    "m = Machine(GPU);\nIndexTaskMap * f;\ndef f(Task t) {\n    return m[0, 0];\n}\n"
);
case!(
    entry_function_wrong_signature,
    "m = Machine(GPU);\ndef f(IPoint p, ISpace s) { return m[0, 0]; }\nIndexTaskMap * f;\n"
);
case!(
    function_without_return,
    "m = Machine(GPU);\ndef f(Task t) { x = t.ipoint; }\nIndexTaskMap * f;\n"
);
case!(
    unreachable_after_return,
    "m = Machine(GPU);\ndef f(Task t) { return m[0, 0]; x = 1; }\nIndexTaskMap * f;\n"
);
case!(
    call_arity_mismatch,
    "def g(int a, int b) { return a + b; }\nx = g(1);\n"
);
case!(
    call_argument_type_mismatch,
    "m = Machine(GPU);\ndef g(int a) { return a; }\nx = g(m);\n"
);
case!(
    binary_operands_of_different_types,
    "m = Machine(GPU);\nx = m.size + 1;\ny = (1, 2) + (1, 2, 3);\nz = True + 1;\n"
);
case!(
    too_many_machine_indices,
    "m = Machine(GPU);\ndef f(Task t) { return m[0, 0, 0]; }\nIndexTaskMap * f;\n"
);
case!(machine_model_method_arguments, "m = Machine(GPU);\na = m.balance_split(0, 4);\nb = m.split(0);\nc = m.merge(0, 5);\nd = m.auto_split(0, 2);\ne = m.split;\n");
case!(
    print_placeholders,
    "print(\"{} and {}\", 1);\nprint(\"{}\", 1, 2);\n"
);
case!(
    unused_function_and_variables,
    "m = Machine(GPU);\nunused = 3;\ndef helper(int k) { tmp = 2; return k; }\n"
);
case!(
    global_assigned_twice,
    "mgpu = Machine(GPU);\nmgpu = Machine(GPU);\n"
);
case!(function_defined_twice, "m = Machine(GPU);\ndef f(Task t) { return m[0, 0]; }\ndef f(Task t) { return m[0, 1]; }\nIndexTaskMap * f;\n");
case!(
    local_reassignment_has_no_effect,
    "def g(int a) { x = a; x = x + 1; return x; }\ny = g(1);\nprint(\"{}\", y);\n"
);
case!(
    shadowed_task_statement,
    "Task t GPU;\nTask t CPU;\nTask * GPU;\nTask a,t OMP;\n"
);
case!(
    shadowed_region_and_layout,
    "Region * r GPU FBMEM;\nRegion * r GPU ZCMEM;\nLayout * * * SOA;\nLayout * * * AOS;\n"
);
case!(
    contradictory_constraints_in_one_layout,
    "Layout * * * SOA AOS C_order F_order Align==64 Align==128;\n"
);
case!(cannot_assign_kinds, "x = GPU;\n");
case!(
    mapping_function_returns_int,
    "def f(Task t) { return 1; }\nIndexTaskMap * f;\n"
);
case!(task_cannot_be_passed, "m = Machine(GPU);\ndef g(Task t) { return m[0, 0]; }\ndef f(Task t) { return g(t); }\nIndexTaskMap * f;\n");
case!(property_on_wrong_receiver, "m = Machine(GPU);\ndef f(Task t) { x = m.ipoint; y = t.size; return m[0, 0]; }\nIndexTaskMap * f;\n");
case!(
    used_before_assignment_at_top_level,
    "x = y + 1;\ny = 2;\nprint(\"{}\", x);\n"
);
case!(
    expert_style_mapper_is_clean,
    "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nLayout * * * SOA C_order;\nm_2d = Machine(GPU);\nm_1d = m_2d.merge(0, 1);\ndef block1d(Task task) {\n    ip = task.ipoint;\n    return m_1d[ip[0] * m_1d.size[0] / task.ispace[0]];\n}\ndef same_point(Task task) {\n    return m_2d[*task.parent.processor(m_2d)];\n}\nIndexTaskMap * block1d;\nSingleTaskMap * same_point;\n"
);
