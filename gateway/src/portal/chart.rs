//! Charts drawn on the server as SVG (PORTAL.md: readable without JavaScript): stacked bars with
//! a title, a legend, and the same figures as a table for screen readers and exact reading.
//! Colours are presentation attributes, never `style`, so the strict CSP allows them.

use maud::{html, Markup};

/// One series: its name and colour (each ≥ 3:1 against white, as WCAG asks of graphics).
pub struct Series<'a> {
    pub name: &'a str,
    pub colour: &'a str,
}

/// Bars of `columns` (a label and one value per series), stacked, scaled to the tallest.
pub fn stacked_bars(title: &str, series: &[Series<'_>], columns: &[(String, Vec<i64>)], empty: &str) -> Markup {
    const WIDTH: f64 = 900.0;
    const HEIGHT: f64 = 220.0;
    const AXIS: f64 = 24.0;
    let tallest = columns.iter().map(|(_, v)| v.iter().sum::<i64>()).max().unwrap_or(0);
    let step = WIDTH / columns.len().max(1) as f64;
    let scale = if tallest > 0 { (HEIGHT - AXIS) / tallest as f64 } else { 0.0 };
    html! {
        figure.chart {
            figcaption { (title) }
            @if tallest == 0 {
                p.muted { (empty) }
            } @else {
                svg viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img" aria-label=(title) width="100%" {
                    title { (title) }
                    @for (i, (label, values)) in columns.iter().enumerate() {
                        @let x = i as f64 * step + step * 0.15;
                        @let mut top = HEIGHT - AXIS;
                        @for (s, value) in values.iter().enumerate() {
                            @if *value > 0 {
                                @let h = *value as f64 * scale;
                                @let y = { top -= h; top };
                                rect x=(format!("{x:.1}")) y=(format!("{y:.1}")) width=(format!("{:.1}", step * 0.7)) height=(format!("{h:.1}"))
                                    fill=(series.get(s).map_or("#4a5263", |s| s.colour)) {
                                    title { (label) " — " (series.get(s).map_or("", |s| s.name)) " : " (value) }
                                }
                            }
                        }
                        @if i % 5 == 0 {
                            text x=(format!("{x:.1}")) y=(format!("{:.1}", HEIGHT - 6.0)) font-size="12" fill="#4a5263" { (label) }
                        }
                    }
                    text x="0" y="12" font-size="12" fill="#4a5263" { (tallest) }
                }
                ul.legend {
                    @for s in series {
                        li { svg.swatch viewBox="0 0 12 12" aria-hidden="true" { rect width="12" height="12" fill=(s.colour) {} } (s.name) }
                    }
                }
                details {
                    summary { (title) " (table)" }
                    table {
                        thead { tr { th { "" } @for s in series { th scope="col" { (s.name) } } } }
                        tbody {
                            @for (label, values) in columns {
                                tr { th scope="row" { (label) } @for v in values { td { (v) } } }
                            }
                        }
                    }
                }
            }
        }
    }
}
