//! Snapshot tests for the targeted diagnostics: for each mistake people and
//! LLMs make, the diagnostics, then every fix applied (one at a time, re-parsing
//! in between, as an editor would) and the result re-checked.

mod common;

case!(
    missing_semicolon_before_next_statement,
    "Task * GPU\n\n# placement\nRegion * * GPU FBMEM;\n"
);
case!(
    missing_semicolon_at_end_of_file,
    "mgpu = Machine(GPU);\nTask * GPU\n"
);
case!(
    missing_semicolon_in_function_body,
    "def f(Task t) {\n    return 1\n}\n"
);
case!(
    python_style_def,
    "Task task0 GPU;\nRegion * ghost_region GPU ZCMEM\n\ndef cyclic(Task task):\n    ip = task.ipoint;\n    mgpu = Machine(GPU)\n    return mgpu[ip[0] % mgpu.size[0], ip[0] % mgpu.size[1]]\n\nIndexTaskMap task4 cyclic;\n"
);
case!(no_align_constraint, "Layout * * * C_order SOA No_Align;\n");
case!(misspelled_constraints, "Layout * * * soa Corder;\n");
case!(align_with_single_equals, "Layout * * * SOA Align=128;\n");
case!(
    keyword_as_variable,
    "size = 3;\nx = size + 1;\ny = m.size;\n"
);
case!(
    keyword_as_parameter,
    "def f(int split) { return split * 2; }\n"
);
case!(keyword_as_task_name, "Task ipoint GPU;\n");
case!(processor_kind_in_layout, "Layout * * GPU SOA C_order;\n");
case!(
    identifier_in_region_processor_slot,
    "Region * * cpu SYSMEM;\n"
);
case!(identifier_in_layout_memory_slot, "Layout * * fbmem SOA;\n");
case!(region_without_processor, "Region t r SYSMEM;\n");
case!(
    legacy_index_task_map,
    "m1 = Machine(GPU);\ndef taco(IPoint x, ISpace y, MSpace m) {\n    return (x[0] % m.size[0], x[1] % m.size[1]);\n}\nIndexTaskMap task_1 m1 taco;\nIndexTaskMap task_2 m1 taco;\n"
);
case!(legacy_instance_limit, "InstanceLimit task_4 GPU 1;\n");
case!(lowercase_statement_keyword, "task * GPU;\n");
case!(property_as_function, "x = len(t);\ny = split(m, 0, 2);\n");
case!(bang_negation, "x = !a;\n");
case!(single_ampersand, "x = a & b;\n");
case!(unterminated_string, "print(\"abc);\n");
case!(zero_argument_call, "x = f();\n");
case!(double_semicolon, "Task * GPU;;\n");
case!(empty_function_body, "def f(Task t) {\n}\n");
case!(untyped_parameter, "def f(task) { return task.ipoint; }\n");
case!(float_literal, "x = 1.5;\n");
case!(unknown_property, "x = m.sizes;\n");
case!(empty_file, "");
case!(comments_only, "# nothing here\n");
case!(
    nested_def,
    "def f(Task t) {\n    def g(Task u) { return 1; }\n    return 2;\n}\nTask * GPU;\n"
);
case!(
    mapping_statement_in_function,
    "def f(Task t) {\n    Task * GPU;\n    return 2;\n}\n"
);
case!(
    non_ascii_outside_comment,
    "# café is fine here\nx = café;\n"
);
case!(slice_with_comma, "x = m[1:2, 3];\n");
case!(unclosed_function, "def f(Task t) {\n    return 1;\n");
case!(
    one_bad_statement_one_diagnostic,
    "Task * GPU;\nRegion * * GPU FBMEM ZCMEM;\nLayout * * * SOA;\nx = (1 + ;\nTask a CPU;\n"
);
