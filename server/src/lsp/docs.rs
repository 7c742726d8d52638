//! Documentation of the language's words: what hover shows and what
//! completion puts beside each item. One table, written from LANGUAGE.md, so
//! hover and completion never disagree.

use mapwright_grammar::ast::Prop;
use mapwright_grammar::token::TokenKind as T;

/// A word's documentation: the form it is used in and a short explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Doc {
    /// How the word is written in context, shown as code.
    pub form: &'static str,
    /// What it means (Markdown).
    pub text: &'static str,
}

impl Doc {
    const fn new(form: &'static str, text: &'static str) -> Doc {
        Doc { form, text }
    }

    /// The hover / completion documentation as Markdown.
    pub fn markdown(&self) -> String {
        format!("```mapper\n{}\n```\n\n{}", self.form, self.text)
    }
}

/// One parameter of a method or built-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamDoc {
    pub name: &'static str,
    pub ty: &'static str,
    pub text: &'static str,
}

/// The signature of a machine-model method (or `Machine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSig {
    pub name: &'static str,
    pub params: &'static [ParamDoc],
    pub returns: &'static str,
    pub text: &'static str,
}

impl MethodSig {
    /// `split(int dim, int factor) -> MSpace`
    pub fn label(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty, p.name))
            .collect();
        format!("{}({}) -> {}", self.name, params.join(", "), self.returns)
    }
}

const fn p(name: &'static str, ty: &'static str, text: &'static str) -> ParamDoc {
    ParamDoc { name, ty, text }
}

/// `Machine(KIND)`: the machine-model constructor (an identifier, not a keyword).
pub const MACHINE: MethodSig = MethodSig {
    name: "Machine",
    params: &[p(
        "kind",
        "PROC",
        "the processor kind: `CPU`, `GPU`, `OMP`, `IO`, `PY` or `PROC`",
    )],
    returns: "MSpace",
    text: "The machine model of every processor of one kind: a 2-D space \
           (nodes, processors of that kind per node). Index it with a point to \
           get a processor; transform it with `split`, `merge`, ... .",
};

/// The signature of a method (`m.split(0, 2)`); `None` for plain properties.
pub fn method_sig(prop: Prop) -> Option<&'static MethodSig> {
    METHODS.iter().find(|m| m.name == prop.name())
}

const METHODS: &[MethodSig] = &[
    MethodSig {
        name: "split",
        params: &[
            p("dim", "int", "the dimension to split"),
            p(
                "factor",
                "int",
                "the size of the new dimension `dim`; it must divide `size[dim]`",
            ),
        ],
        returns: "MSpace",
        text: "Splits dimension `dim` in two: the new `dim` has size `factor` and the \
               next one `size[dim] / factor`. The result has one more dimension.",
    },
    MethodSig {
        name: "merge",
        params: &[
            p("d1", "int", "the first dimension"),
            p("d2", "int", "the second dimension (it changes fastest)"),
        ],
        returns: "MSpace",
        text: "Merges dimensions `d1` and `d2` into one of size `size[d1] * size[d2]`; \
               `d2` changes fastest. The result has one dimension fewer.",
    },
    MethodSig {
        name: "swap",
        params: &[
            p("d1", "int", "a dimension"),
            p("d2", "int", "the dimension to exchange it with"),
        ],
        returns: "MSpace",
        text: "Exchanges dimensions `d1` and `d2`.",
    },
    MethodSig {
        name: "slice",
        params: &[
            p("dim", "int", "the dimension to restrict"),
            p("lo", "int", "the first index kept"),
            p("hi", "int", "the last index kept (inclusive)"),
        ],
        returns: "MSpace",
        text: "Keeps only indices `lo..=hi` (inclusive) of dimension `dim`.",
    },
    MethodSig {
        name: "reverse",
        params: &[p("dim", "int", "the dimension to reverse")],
        returns: "MSpace",
        text: "Reverses the order of dimension `dim`.",
    },
    MethodSig {
        name: "balance_split",
        params: &[
            p("dim", "int", "the dimension to split"),
            p(
                "k",
                "int",
                "the number of dimensions to split it into (2 or 3)",
            ),
        ],
        returns: "MSpace",
        text: "Splits dimension `dim` into `k` dimensions (2 or 3) as square as \
               possible, sizes decreasing.",
    },
    MethodSig {
        name: "auto_split",
        params: &[
            p("dim", "int", "the dimension to split"),
            p(
                "extents",
                "tuple",
                "the launch domain to balance, e.g. `task.ispace`",
            ),
        ],
        returns: "MSpace",
        text: "Splits dimension `dim` into `len(extents)` dimensions so that each \
               processor gets a balanced share of a domain with these extents.",
    },
    MethodSig {
        name: "greedy_split",
        params: &[
            p("dim", "int", "the dimension to split"),
            p(
                "extents",
                "tuple",
                "the launch domain to balance, e.g. `task.ispace`",
            ),
        ],
        returns: "MSpace",
        text: "Like `auto_split`, choosing the factors greedily (largest first).",
    },
    MethodSig {
        name: "has",
        params: &[p("kind", "MEM", "a memory kind, e.g. `FBMEM`")],
        returns: "bool",
        text: "On a processor (`m[i, j].has(FBMEM)`): whether it has a memory of \
               this kind.",
    },
    MethodSig {
        name: "processor",
        params: &[p(
            "m",
            "MSpace",
            "the machine model to express the processor in",
        )],
        returns: "IPoint",
        text: "On a task (`task.parent.processor(m)`): the processor the task runs \
               on, as a point of machine model `m`.",
    },
];

/// Documentation of a property or method after `.`.
pub fn property_doc(prop: Prop) -> Doc {
    match prop {
        Prop::Size => Doc::new(
            "m.size",
            "The extents of a machine model as a tuple, e.g. `(2, 4)` for 2 nodes \
             with 4 GPUs each; `m.size[1]` is the processors per node.",
        ),
        Prop::Volume => Doc::new(
            "m.volume",
            "The number of points: the product of the extents (the processor \
             count of a machine model).",
        ),
        Prop::Len => Doc::new(
            "m.len",
            "The number of dimensions of a machine model (or the length of a tuple).",
        ),
        Prop::Ipoint => Doc::new(
            "task.ipoint",
            "The launch point of this task in its index space, an int tuple \
             (`task.ipoint[0]` is its first coordinate).",
        ),
        Prop::Ispace => Doc::new(
            "task.ispace",
            "The extents of the task's launch domain, an int tuple.",
        ),
        Prop::Parent => Doc::new(
            "task.parent",
            "The parent task (the task that launched this one); used for single \
             launches, e.g. `m[*task.parent.processor(m)]` maps next to the parent.",
        ),
        Prop::Split => Doc::new("m.split(dim, factor)", METHODS[0].text),
        Prop::Merge => Doc::new("m.merge(d1, d2)", METHODS[1].text),
        Prop::Swap => Doc::new("m.swap(d1, d2)", METHODS[2].text),
        Prop::Slice => Doc::new("m.slice(dim, lo, hi)", METHODS[3].text),
        Prop::Reverse => Doc::new("m.reverse(dim)", METHODS[4].text),
        Prop::BalanceSplit => Doc::new("m.balance_split(dim, k)", METHODS[5].text),
        Prop::AutoSplit => Doc::new("m.auto_split(dim, extents)", METHODS[6].text),
        Prop::GreedySplit => Doc::new("m.greedy_split(dim, extents)", METHODS[7].text),
        Prop::Has => Doc::new("m[i, j].has(MEM)", METHODS[8].text),
        Prop::Processor => Doc::new("task.processor(m)", METHODS[9].text),
    }
}

/// True for the properties that apply to a task (`task.ipoint`, ...).
pub fn is_task_property(prop: Prop) -> bool {
    matches!(
        prop,
        Prop::Ipoint | Prop::Ispace | Prop::Parent | Prop::Processor
    )
}

/// Documentation of a reserved word, a kind or `Machine`; `None` for
/// identifiers, numbers and punctuation.
pub fn token_doc(kind: T) -> Option<Doc> {
    use T::*;
    let doc = match kind {
        KwTask => Doc::new(
            "Task NAME|* PROC[,PROC...];",
            "**Processor placement.** A priority list of processor kinds for the named \
             tasks (or `*`: every task without a more specific rule). The first kind for \
             which the task has a variant wins. In a parameter list, `Task` is the type \
             of a task (`def f(Task task)`).",
        ),
        KwRegion => Doc::new(
            "Region TASK|* REGION|*|INDEX PROC|* MEM[,MEM...];",
            "**Memory placement.** When TASK runs on a PROC processor, put REGION (its \
             semantic name, or its 0-based argument index) in the first available memory \
             of the list. Note: the third field is a *processor* kind.",
        ),
        KwLayout => Doc::new(
            "Layout TASK|* REGION|* MEM|* CONSTRAINT*;",
            "**Data layout** of REGION's instances in memory MEM: `SOA`/`AOS`, \
             `C_order`/`F_order`, `Compact`, `Exact`, `Align OP N`. Note: the third \
             field is a *memory* kind.",
        ),
        KwInstanceLimit => Doc::new(
            "InstanceLimit TASK N;",
            "**Backpressure.** At most N instances of TASK are mapped at once per node.",
        ),
        KwCollectMemory => Doc::new(
            "CollectMemory TASK|* REGION|*;",
            "Lets the runtime collect the read-only instances of REGION after TASK \
             used them, instead of keeping them for reuse.",
        ),
        KwIndexTaskMap => Doc::new(
            "IndexTaskMap NAME|*|n1,n2,...|CPU|GPU|OMP FUNC;",
            "**Index-launch placement.** `FUNC(Task task)` maps each point of the \
             launch to one processor (a point of a machine model). A processor kind \
             selects every task mapped to that kind.",
        ),
        KwSingleTaskMap => Doc::new(
            "SingleTaskMap NAME|*|n1,n2,...|CPU|GPU|OMP FUNC;",
            "**Single-launch placement.** Like `IndexTaskMap`, for single \
             (non-index) launches: `FUNC(Task task)` returns the processor.",
        ),
        KwControlReplicate => Doc::new(
            "ControlReplicate NAME[,NAME...];",
            "Replicates the control of the named tasks across nodes (control \
             replication). Names only, no `*`.",
        ),
        FOrder => Doc::new(
            "F_order",
            "Fortran (column-major) order: the first dimension varies fastest.",
        ),
        COrder => Doc::new(
            "C_order",
            "C (row-major) order: the last dimension varies fastest.",
        ),
        Aos => Doc::new(
            "AOS",
            "Array of structs: the fields of one element are stored together.",
        ),
        Soa => Doc::new(
            "SOA",
            "Struct of arrays: each field is stored contiguously.",
        ),
        Compact => Doc::new(
            "Compact",
            "A compact instance: only the points the task uses are allocated \
             (for sparse or unstructured regions).",
        ),
        Exact => Doc::new(
            "Exact",
            "The instance covers exactly the requested bounds, never a larger one.",
        ),
        Align => Doc::new(
            "Align OP N",
            "Field alignment in bytes, e.g. `Align == 128`; OP is one of \
             `< <= > >= == !=`.",
        ),
        ProcCpu => Doc::new("CPU", "Processor kind: CPU cores (Legion `LOC_PROC`)."),
        ProcGpu => Doc::new("GPU", "Processor kind: CUDA GPUs (Legion `TOC_PROC`)."),
        ProcIo => Doc::new("IO", "Processor kind: I/O processors (`IO_PROC`)."),
        ProcPy => Doc::new("PY", "Processor kind: Python processors (`PY_PROC`)."),
        ProcProc => Doc::new("PROC", "Processor kind: processor groups (`PROC_GROUP`)."),
        ProcOmp => Doc::new(
            "OMP",
            "Processor kind: OpenMP processors (`OMP_PROC`), each a group of cores.",
        ),
        MemSysmem => Doc::new(
            "SYSMEM",
            "Memory kind: a node's system memory (DRAM), reachable from its CPUs.",
        ),
        MemFbmem => Doc::new(
            "FBMEM",
            "Memory kind: a GPU's framebuffer (device memory): fastest for that \
             GPU, unreachable from CPUs.",
        ),
        MemRdmem => Doc::new(
            "RDMEM",
            "Memory kind: registered (pinned) DRAM, usable for RDMA.",
        ),
        MemZcmem => Doc::new(
            "ZCMEM",
            "Memory kind: zero-copy memory: pinned host memory that both CPUs and \
             GPUs access directly (GPU access goes over PCIe/NVLink).",
        ),
        MemSockmem => Doc::new(
            "SOCKMEM",
            "Memory kind: the memory of one socket (NUMA domain).",
        ),
        MemVirtual => Doc::new(
            "VIRTUAL",
            "Memory kind: a virtual instance with no physical allocation.",
        ),
        TyInt => Doc::new("int", "Type: an integer."),
        TyBool => Doc::new("bool", "Type: `True` or `False`."),
        TyIPoint => Doc::new(
            "IPoint",
            "Type: a point, an int tuple such as `task.ipoint`.",
        ),
        TyISpace => Doc::new(
            "ISpace",
            "Type: the extents of an index space, an int tuple such as `task.ispace`.",
        ),
        TyMSpace => Doc::new(
            "MSpace",
            "Type: a machine model, e.g. `Machine(GPU)` or a transformation of one.",
        ),
        KwTuple => Doc::new(
            "tuple(EXPR for NAME in EXPR)",
            "Tuple comprehension: evaluates EXPR for each element NAME of a tuple.",
        ),
        KwFor | KwIn => Doc::new(
            "tuple(EXPR for NAME in EXPR)",
            "Part of a tuple comprehension.",
        ),
        KwTrue | KwFalse => Doc::new("True | False", "Boolean constants."),
        KwDef => Doc::new(
            "def NAME(TYPE a, ...) { STMT+ }",
            "Defines a function. Its body holds assignments, `return EXPR;` and \
             `print(...)`, and may not be empty. An `IndexTaskMap`/`SingleTaskMap` \
             function takes exactly one `Task` parameter and returns a processor.",
        ),
        KwReturn => Doc::new("return EXPR;", "Returns a value from a function."),
        KwPrint => Doc::new(
            "print(\"fmt {} {}\", e1, e2);",
            "Prints a debugging line; the number of `{}` must equal the number of \
             arguments.",
        ),
        _ => return None,
    };
    Some(doc)
}

/// Documentation of a property token (`size`, `split`, ...).
pub fn prop_of_token(kind: T) -> Option<Prop> {
    kind.keyword_text()
        .filter(|_| kind.is_property())
        .and_then(Prop::from_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_keyword_and_property_is_documented() {
        let all = mapwright_grammar::token::lex(
            "Task Region Layout InstanceLimit CollectMemory IndexTaskMap SingleTaskMap \
             ControlReplicate F_order C_order AOS SOA Compact Align Exact CPU GPU IO PY \
             PROC OMP SYSMEM FBMEM RDMEM ZCMEM SOCKMEM VIRTUAL int bool IPoint ISpace \
             MSpace tuple for in True False def return print",
        );
        for t in &all.tokens {
            assert!(token_doc(t.kind).is_some(), "{:?}", t.kind);
        }
        for prop in Prop::ALL {
            assert!(!property_doc(prop).text.is_empty());
            assert_eq!(prop.is_method(), method_sig(prop).is_some(), "{prop:?}");
        }
        assert_eq!(
            method_sig(Prop::Split).unwrap().label(),
            "split(int dim, int factor) -> MSpace"
        );
    }
}
