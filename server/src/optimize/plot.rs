//! The trajectory plot (`--report plot.svg`): best normalized throughput per
//! iteration, one line per proposer run, with the expert's 1.0x marked.

/// One line of the plot.
pub struct Series {
    pub label: String,
    pub values: Vec<f64>,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained SVG document; `reference` names what 1.0x is (`expert`,
/// or `your mapper` for a trajectory relative to the start).
pub fn trajectory_svg(title: &str, series: &[Series], reference: &str) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 420.0, 60.0, 190.0, 40.0, 50.0);
    let plot_w = w - left - right;
    let plot_h = h - top - bottom;
    let max_len = series
        .iter()
        .map(|s| s.values.len())
        .max()
        .unwrap_or(1)
        .max(2);
    let max_y = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(1.2f64, f64::max)
        * 1.05;
    let x = |i: usize| left + plot_w * i as f64 / (max_len - 1) as f64;
    let y = |v: f64| top + plot_h * (1.0 - (v / max_y).clamp(0.0, 1.0));
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{left}\" y=\"24\" font-size=\"15\">{}</text>\n",
        escape(title)
    );
    // Axes and grid.
    svg.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n",
        top + plot_h,
        left + plot_w,
        top + plot_h
    ));
    svg.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{}\" stroke=\"black\"/>\n",
        top + plot_h
    ));
    let steps = 5;
    for k in 0..=steps {
        let v = max_y * k as f64 / steps as f64;
        svg.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v:.2}x</text>\n",
            left + plot_w,
            left - 6.0,
            y(v) + 4.0,
            y = y(v)
        ));
    }
    for i in 0..max_len {
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{i}</text>\n",
            x(i),
            top + plot_h + 18.0
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">iteration</text>\n",
        left + plot_w / 2.0,
        h - 10.0
    ));
    // What 1.0x is.
    svg.push_str(&format!(
        "<line x1=\"{left}\" y1=\"{y1:.1}\" x2=\"{}\" y2=\"{y1:.1}\" stroke=\"black\" stroke-dasharray=\"5,4\"/><text x=\"{}\" y=\"{:.1}\">{} 1.0x</text>\n",
        left + plot_w,
        left + plot_w + 6.0,
        y(1.0) + 4.0,
        escape(reference),
        y1 = y(1.0)
    ));
    for (n, s) in series.iter().enumerate() {
        let color = COLORS[n % COLORS.len()];
        let points: Vec<String> = s
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v)))
            .collect();
        svg.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
            points.join(" ")
        ));
        let ly = top + 16.0 * n as f64;
        svg.push_str(&format!(
            "<rect x=\"{}\" y=\"{:.1}\" width=\"12\" height=\"3\" fill=\"{color}\"/><text x=\"{}\" y=\"{:.1}\">{}</text>\n",
            left + plot_w + 6.0,
            ly + 40.0,
            left + plot_w + 22.0,
            ly + 45.0,
            escape(&s.label)
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_has_one_line_per_series() {
        let svg = trajectory_svg(
            "t",
            &[
                Series {
                    label: "a<b".into(),
                    values: vec![0.5, 1.0, 1.2],
                },
                Series {
                    label: "c".into(),
                    values: vec![0.1],
                },
            ],
            "expert",
        );
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a&lt;b"));
        assert!(svg.ends_with("</svg>\n"));
    }
}
