/* The C ABI between mapwright's Legion mapper (mapwright_mapper.cc) and
 * mapwright's mapping resolution (Rust, runtime/legion/abi/src/lib.rs).
 *
 * The C++ side reports what Legion knows (the machine, each launch); the
 * Rust side decides and logs. Strings are UTF-8 and NUL-terminated. Every
 * function is safe to call with any input: failures come back as values,
 * never as a crash. Keep this file and lib.rs in step. */
#ifndef MAPWRIGHT_ABI_H
#define MAPWRIGHT_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Processor kinds (mapwright's ProcKind). */
enum mw_proc_kind {
  MW_PROC_CPU = 0,
  MW_PROC_GPU = 1,
  MW_PROC_OMP = 2,
  MW_PROC_IO = 3,
  MW_PROC_PY = 4,
  MW_PROC_UTIL = 5,
  MW_PROC_SET = 6
};

/* Memory kinds (mapwright's MemKind); MW_MEM_OTHER for kinds the DSL
 * cannot name and mapwright does not place data in. */
enum mw_mem_kind {
  MW_MEM_SYSMEM = 0,
  MW_MEM_FBMEM = 1,
  MW_MEM_ZCMEM = 2,
  MW_MEM_SOCKMEM = 3,
  MW_MEM_RDMEM = 4,
  MW_MEM_OTHER = 99
};

/* Region privileges. */
enum mw_privilege {
  MW_PRIV_NONE = 0,
  MW_PRIV_READ = 1,
  MW_PRIV_WRITE = 2,
  MW_PRIV_READ_WRITE = 3,
  MW_PRIV_REDUCE = 4
};

/* Instance decisions. */
enum mw_instance {
  MW_INSTANCE_PHYSICAL = 0,
  MW_INSTANCE_VIRTUAL = 1, /* VIRTUAL in the mapper, or an inner task */
  MW_INSTANCE_NONE = 2     /* no access: not mapped */
};

/* Affinity scopes (mapwright's Scope). */
enum mw_scope { MW_SCOPE_OWN = 0, MW_SCOPE_PEER = 1, MW_SCOPE_SHARED = 2 };

/* Alignment operators of `Align OP N`. */
enum mw_align_op {
  MW_ALIGN_NONE = 0,
  MW_ALIGN_EQ = 1,
  MW_ALIGN_LT = 2,
  MW_ALIGN_LE = 3,
  MW_ALIGN_GT = 4,
  MW_ALIGN_GE = 5,
  MW_ALIGN_NE = 6
};

typedef struct mw_proc_count {
  uint32_t kind; /* enum mw_proc_kind */
  uint32_t count;
} mw_proc_count;

typedef struct mw_mem_count {
  uint32_t kind; /* enum mw_mem_kind */
  uint32_t count;
  uint64_t capacity_bytes;
} mw_mem_count;

typedef struct mw_affinity {
  uint32_t proc;  /* enum mw_proc_kind */
  uint32_t mem;   /* enum mw_mem_kind */
  uint32_t scope; /* enum mw_scope */
  uint32_t bandwidth;
} mw_affinity;

/* The machine as Legion reports it (the local node's processors and
 * memories; `nodes` address spaces of the same shape). */
typedef struct mw_host {
  uint32_t nodes;
  const mw_proc_count *procs;
  size_t nprocs;
  const mw_mem_count *mems;
  size_t nmems;
  const mw_affinity *affinities;
  size_t naffinities;
} mw_host;

/* One region requirement: the names it answers to (its own semantic name,
 * its parent partition's, its privilege parent's), its privilege and how
 * many fields it asks for. */
typedef struct mw_region {
  const char *const *names;
  size_t nnames;
  uint32_t privilege; /* enum mw_privilege */
  uint32_t fields;
} mw_region;

/* One launch of a task. */
typedef struct mw_launch {
  const char *task;
  const char *parent; /* NULL for the top-level task */
  int index_launch;
  uint32_t dims;     /* of lo and hi (index launches) */
  const int64_t *lo; /* domain bounds, inclusive */
  const int64_t *hi;
  uint32_t variant_kinds; /* bit (1 << mw_proc_kind) per kind with a variant */
  int inner;              /* the variant is an inner task */
  const mw_region *regions;
  size_t nregions;
} mw_launch;

/* What the mapper decides for one region argument. */
typedef struct mw_region_decision {
  uint32_t instance; /* enum mw_instance */
  uint32_t memory;   /* enum mw_mem_kind */
  int soa;
  int c_order;
  int compact;
  int exact;
  uint32_t align_op; /* enum mw_align_op */
  int64_t align;
  int collect; /* CollectMemory applies */
} mw_region_decision;

/* What the mapper decides for one launch. */
typedef struct mw_task_decision {
  uint32_t proc_kind; /* enum mw_proc_kind */
  int has_map_rule;   /* an IndexTaskMap/SingleTaskMap places its points */
  int control_replicate;
  int64_t instance_limit; /* -1: none */
  uint32_t launch_id;     /* names the launch to mw_log_mapped */
} mw_task_decision;

/* What was realised for one region argument, for the decision log. */
typedef struct mw_region_mapped {
  uint32_t index;
  uint32_t instance;    /* enum mw_instance */
  uint32_t memory;      /* enum mw_mem_kind of the instance's memory */
  int layout_holds;     /* Legion's instance entails the requested layout */
  int reused;           /* mapped onto instances already valid there: no copy */
  uint64_t bytes;       /* size of its instances (physical) */
  uint64_t instance_id; /* Legion's id of its (first) instance */
  uint32_t mem_node;    /* the memory's node, and its index among the node's */
  uint32_t mem_index;   /* memories of its kind */
} mw_region_mapped;

/* One memory: kind (enum mw_mem_kind), node, index among the node's
 * memories of that kind. */
typedef struct mw_memory_ref {
  uint32_t kind;
  uint32_t node;
  uint32_t index;
} mw_memory_ref;

/* One field of a region argument: its name (NULL or "" where the program
 * gave it none), Legion's field id and its size in bytes. */
typedef struct mw_field {
  const char *name;
  uint32_t id;
  uint64_t size;
} mw_field;

/* The region behind argument `index` of a mapped point task: the bounds
 * of its index space (`dims` values each, inclusive), its points, and the
 * requirement's fields. */
typedef struct mw_region_shape {
  uint32_t index;
  uint32_t dims;
  const int64_t *lo;
  const int64_t *hi;
  uint64_t volume;
  const mw_field *fields;
  size_t nfields;
} mw_region_shape;

typedef struct mw_session mw_session;

/* Checks the mapper file and prepares a session. On failure returns NULL
 * and sets *error to the diagnostics (free with mw_string_free). *warnings
 * (may be NULL) receives warnings to print, or NULL. `decision_log`,
 * `machine_out` and `app_out` (each may be NULL) name the files to write:
 * the decision log, this host's machine description, and the program's
 * application description as it ran. */
mw_session *mw_session_open(const char *mapper_path, const mw_host *host, int semantic_names,
                            const char *decision_log, const char *machine_out, const char *app_out,
                            char **error, char **warnings);
void mw_session_close(mw_session *session);
void mw_string_free(char *text);

/* Decides `launch`: the task's kind and, for each of its `nregions`
 * arguments, memory and layout into `regions`. Returns 0, or 1 when a real
 * run aborts here, with the message in *error. */
int mw_decide(mw_session *session, const mw_launch *launch, mw_task_decision *task,
              mw_region_decision *regions, char **error);

/* Where point `point` of an index launch runs, or where a single task
 * launched from parent point `point` (dims 0: from a single task) runs:
 * node and index among the node's processors of the decided kind.
 * Returns 0, or 1 with the message in *error. */
int mw_place(mw_session *session, const mw_launch *launch, const int64_t *point, uint32_t dims,
             uint32_t *node, uint32_t *proc, char **error);

/* For the application description (-mapwright:app): one launch of the
 * launch `launch_id` (a select_task_options call). */
void mw_app_launched(mw_session *session, uint32_t launch_id);

/* For the application description: the regions behind the arguments of a
 * mapped point of the launch `launch_id`. */
void mw_app_regions(mw_session *session, uint32_t launch_id, const mw_region_shape *shapes,
                    size_t nshapes);

/* Writes out what the decision log holds so far (it is written in
 * batches), and the application description where one is asked for:
 * before the program stops. */
void mw_log_flush(mw_session *session);

/* Logs one mapped task (see runtime/src/legion/log.rs) of the launch
 * `launch_id` (from its mw_decide): `proc` is its
 * first target processor, `targets` how many it was given (Legion runs it
 * on whichever of them is free first). */
void mw_log_mapped(mw_session *session, uint32_t launch_id, uint64_t uid, const int64_t *point,
                   uint32_t dims, uint32_t proc_kind, uint32_t node, uint32_t proc,
                   uint32_t targets, const mw_region_mapped *regions, size_t nregions);

/* Logs where and when the task `uid` (logged by mw_log_mapped) ran, as
 * Realm measured it: the processor, and its ready, start and end times in
 * nanoseconds from the start of the program. */
void mw_log_ran(mw_session *session, const char *task, uint64_t uid, const int64_t *point,
                uint32_t dims, uint32_t proc_kind, uint32_t node, uint32_t proc, int64_t ready_ns,
                int64_t start_ns, int64_t end_ns);

/* Logs a copy (fill: 0) or fill (1) Legion made for argument `index` of
 * the task `uid`, as Realm measured it: `bytes` moved from `src` (NULL for
 * a fill) to `dst`, from `start_ns` to `end_ns`. */
void mw_log_copy(mw_session *session, const char *task, uint64_t uid, uint32_t index, int fill,
                 const mw_memory_ref *src, const mw_memory_ref *dst, uint64_t bytes,
                 int64_t start_ns, int64_t end_ns);

#ifdef __cplusplus
}
#endif

#endif
