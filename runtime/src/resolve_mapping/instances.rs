//! Instances: what kind of instance each region argument gets, instance
//! limits and `CollectMemory`.

use crate::app::{Privilege, RegionArg, Task};
use crate::decisions::InstanceKind;

use super::resolver::Resolver;

impl<'a> Resolver<'a> {
    /// Whether a CollectMemory statement applies (`should_collect_memory`;
    /// read-only arguments only, `map_task_post_function`).
    pub(super) fn collects(&self, task: &Task, arg: &RegionArg, names: &[String]) -> bool {
        if arg.privilege != Privilege::Read {
            return false;
        }
        // Any entry whose task key is `*` or the task and whose region key
        // is `*` or one of the argument's names (a scan of the few
        // statements: no key strings built per argument).
        self.rules.collect.iter().any(|(t, r)| {
            (t == "*" || *t == task.name) && (r == "*" || names.iter().any(|n| n == r))
        })
    }

    /// The task's `InstanceLimit`, if it sets a positive one (the first
    /// statement for the task wins).
    pub(super) fn instance_limit(&self, task: &Task) -> Option<u64> {
        self.rules
            .limit
            .get(&task.name)
            .and_then(|(n, _)| u64::try_from(*n).ok())
            .filter(|n| *n > 0)
    }
}

/// The instance a region argument gets (`NSMapper::map_task`): none without
/// access, virtual for every argument of an inner task, physical for the
/// reductions of other tasks, virtual for arguments the application tags
/// `VIRTUAL_MAP` and for `VIRTUAL` in the memory list (`is_virtual`), else
/// physical.
///
/// An inner task's reductions are virtual too, as Legion 25.12's
/// DefaultMapper maps them (the reference gave them a physical reduction
/// instance). On 25.12 such an instance lost one subtask's contributions in
/// about half of solomonik's runs (docs/legion.md, "Deviations").
pub(super) fn instance_kind(task: &Task, arg: &RegionArg, is_virtual: bool) -> InstanceKind {
    if arg.privilege == Privilege::None {
        InstanceKind::NoAccess
    } else if task.inner {
        InstanceKind::InnerTask
    } else if arg.privilege == Privilege::Reduce {
        InstanceKind::Physical
    } else if arg.virtual_by_app {
        InstanceKind::VirtualByApp
    } else if is_virtual {
        InstanceKind::VirtualByMapper
    } else {
        InstanceKind::Physical
    }
}
