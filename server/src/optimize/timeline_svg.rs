//! The timeline picture of a measured run (`optimize --report plot.svg`
//! writes `plot.timeline.svg` for the best candidate's run): one row per
//! processor with its task runs as bars, colored by task, and a row of the
//! copies and fills, as Legion Prof draws them; a legend gives each
//! colored task's total time. Each bar carries its task and times as a
//! tooltip.

use std::collections::BTreeMap;

use mapwright_runtime::legion::measured::seconds_text;
use mapwright_runtime::legion::timeline::Timeline;

const COLORS: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f",
];
/// Tasks past the ten that took the most time share this color.
const OTHER: &str = "#c7c7c7";

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained SVG document of `timeline`.
pub fn timeline_svg(title: &str, timeline: &Timeline) -> String {
    // The tasks by total time, the first ten colored.
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    for r in &timeline.runs {
        *totals.entry(r.task.as_str()).or_default() += r.end_s - r.start_s;
    }
    let mut ranked: Vec<(&str, f64)> = totals.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let color = |task: &str| {
        ranked
            .iter()
            .take(COLORS.len())
            .position(|(t, _)| *t == task)
            .map_or(OTHER, |i| COLORS[i])
    };

    let rows = timeline.procs.len() + 1;
    let (left, right, top, row_h, bar_h) = (120.0, 20.0, 40.0, 24.0, 16.0);
    let width = 960.0;
    let plot_w = width - left - right;
    let axis_y = top + row_h * rows as f64 + 8.0;
    let legend_rows = ranked.len().min(COLORS.len()).div_ceil(2) + 1;
    let height = axis_y + 30.0 + 18.0 * legend_rows as f64;
    let span = timeline.span_s.max(1e-9);
    let x = |s: f64| left + plot_w * (s / span).clamp(0.0, 1.0);

    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width} {height:.0}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"22\" font-size=\"14\">{}</text>\n",
        escape(title)
    );
    // Rows: the processors, then the copies.
    for (i, name) in timeline
        .procs
        .iter()
        .map(String::as_str)
        .chain(std::iter::once("copies"))
        .enumerate()
    {
        let y = top + row_h * i as f64;
        let shade = if i % 2 == 0 { "#f4f4f4" } else { "#ffffff" };
        out.push_str(&format!(
            "<rect x=\"{left}\" y=\"{y}\" width=\"{plot_w}\" height=\"{row_h}\" fill=\"{shade}\"/>\n\
             <text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            left - 8.0,
            y + row_h / 2.0 + 4.0,
            escape(name)
        ));
    }
    for r in &timeline.runs {
        let y = top + row_h * r.proc as f64 + (row_h - bar_h) / 2.0;
        let (x0, x1) = (x(r.start_s), x(r.end_s));
        out.push_str(&format!(
            "<rect class=\"run\" x=\"{x0:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{bar_h}\" \
             fill=\"{}\"><title>{} on {}: {} to {} ({})</title></rect>\n",
            (x1 - x0).max(0.5),
            color(&r.task),
            escape(&r.task),
            escape(timeline.procs.get(r.proc).map_or("?", String::as_str)),
            seconds_text(r.start_s),
            seconds_text(r.end_s),
            seconds_text(r.end_s - r.start_s)
        ));
    }
    let copy_y = top + row_h * timeline.procs.len() as f64 + (row_h - bar_h) / 2.0;
    for c in &timeline.copies {
        let (x0, x1) = (x(c.start_s), x(c.end_s));
        out.push_str(&format!(
            "<rect class=\"copy\" x=\"{x0:.2}\" y=\"{copy_y:.1}\" width=\"{:.2}\" \
             height=\"{bar_h}\" fill=\"{}\"><title>{} of {} bytes into {} for {} ({})</title></rect>\n",
            (x1 - x0).max(0.5),
            if c.fill { "#9ecae1" } else { "#3182bd" },
            if c.fill { "fill" } else { "copy" },
            c.bytes,
            escape(&c.into),
            escape(&c.task),
            seconds_text(c.end_s - c.start_s)
        ));
    }
    // The time axis.
    out.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{:.0}\" y2=\"{axis_y}\" stroke=\"black\"/>\n",
        left + plot_w
    ));
    for k in 0..=4 {
        let s = span * k as f64 / 4.0;
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            x(s),
            axis_y + 16.0,
            seconds_text(s)
        ));
    }
    // The legend: the colored tasks with their total time.
    let legend_y = axis_y + 40.0;
    for (i, (task, total)) in ranked.iter().take(COLORS.len()).enumerate() {
        let (col, row) = (i % 2, i / 2);
        let lx = left + col as f64 * plot_w / 2.0;
        let ly = legend_y + 18.0 * row as f64;
        out.push_str(&format!(
            "<rect x=\"{lx}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{:.0}\" y=\"{ly:.1}\">{} ({} in all)</text>\n",
            ly - 10.0,
            COLORS[i],
            lx + 18.0,
            escape(task),
            seconds_text(*total)
        ));
    }
    if ranked.len() > COLORS.len() {
        let ly = legend_y + 18.0 * (COLORS.len() / 2) as f64;
        out.push_str(&format!(
            "<rect x=\"{left}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{OTHER}\"/>\
             <text x=\"{:.0}\" y=\"{ly:.1}\">{} other task{}</text>\n",
            ly - 10.0,
            left + 18.0,
            ranked.len() - COLORS.len(),
            if ranked.len() - COLORS.len() == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mapwright_runtime::legion::timeline::{TimelineCopy, TimelineRun};

    #[test]
    fn every_run_is_a_bar_in_its_processors_row_and_every_copy_is_marked() {
        let t = Timeline {
            procs: vec!["node0 CPU0".into(), "node0 CPU1".into()],
            runs: vec![
                TimelineRun {
                    proc: 0,
                    task: "calc<1>".into(),
                    start_s: 0.0,
                    end_s: 0.5,
                },
                TimelineRun {
                    proc: 1,
                    task: "update".into(),
                    start_s: 0.5,
                    end_s: 1.0,
                },
            ],
            copies: vec![TimelineCopy {
                into: "node0 SYSMEM0".into(),
                task: "update".into(),
                bytes: 4096,
                fill: false,
                start_s: 0.4,
                end_s: 0.5,
            }],
            span_s: 1.0,
        };
        let svg = timeline_svg("best run", &t);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("class=\"run\"").count(), 2);
        assert_eq!(svg.matches("class=\"copy\"").count(), 1);
        assert!(svg.contains(">node0 CPU1</text>") && svg.contains(">copies</text>"));
        // Names are escaped; each colored task is in the legend.
        assert!(svg.contains("calc&lt;1&gt; on node0 CPU0"));
        assert!(svg.contains("update (500.0 ms in all)"), "{svg}");
        // The first bar spans half the plot's width (820 px from x = 120).
        assert!(
            svg.contains("x=\"120.00\" y=\"44.0\" width=\"410.00\""),
            "{svg}"
        );
    }
}
