//! The optimize report's pictures, written side by side: the trajectory
//! plot ([`super::plot`]) and, where the best candidate's run was measured
//! (a `legion` or `command` run), that run's per-processor timeline
//! ([`super::timeline_svg`]) as `STEM.timeline.svg` next to the plot. The
//! CLI's `--report` and the language server's optimize (into the run
//! folder) both write them here.

use std::path::{Path, PathBuf};

use super::plot::{trajectory_svg, Series};
use super::timeline_svg::timeline_svg;
use super::Report;

/// The files [`write`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pictures {
    pub plot: PathBuf,
    /// `None` where the best run has no measured timeline (the simulator).
    pub timeline: Option<PathBuf>,
}

/// Writes the trajectory of `series` (the caller's earlier runs, then this
/// one's) to `plot`, and the best run's timeline beside it.
pub fn write(
    report: &Report,
    (app, machine): (&str, &str),
    mut series: Vec<Series>,
    plot: &Path,
) -> std::io::Result<Pictures> {
    series.push(Series {
        label: format!("{} (seed {}, this run)", report.proposer, report.seed),
        values: report.trajectory.clone(),
    });
    let (measure, reference) = match report.trajectory_basis.relative_to.as_str() {
        "expert" => ("best normalized throughput", "expert"),
        _ => ("best speed relative to your mapper", "your mapper"),
    };
    let svg = trajectory_svg(
        &format!("{app} on {machine}: {measure}"),
        &series,
        reference,
    );
    std::fs::write(plot, svg)?;
    let best = report.records.get(report.best_iteration);
    let timeline = match best.and_then(|r| r.evaluation.metrics.timeline.as_ref()) {
        Some(timeline) => {
            let path = timeline_path(plot);
            let title = format!(
                "{app} on {machine}: the best mapper's run (iteration {}), as Realm measured it",
                report.best_iteration
            );
            std::fs::write(&path, timeline_svg(&title, timeline))?;
            Some(path)
        }
        None => None,
    };
    Ok(Pictures {
        plot: plot.to_path_buf(),
        timeline,
    })
}

/// `STEM.timeline.svg` beside the plot `STEM.svg`.
pub fn timeline_path(plot: &Path) -> PathBuf {
    let stem = plot
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    plot.with_file_name(format!("{stem}.timeline.svg"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_goes_beside_the_plot() {
        assert_eq!(
            timeline_path(Path::new("out/plot.svg")),
            PathBuf::from("out/plot.timeline.svg")
        );
        assert_eq!(
            timeline_path(Path::new("report")),
            PathBuf::from("report.timeline.svg")
        );
    }
}
