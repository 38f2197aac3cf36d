//! The colours every chart draws its series in, in order.

use plotters::style::RGBColor;

/// Series colours (matplotlib's first four), in the order series are drawn.
pub(super) const SERIES: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];
