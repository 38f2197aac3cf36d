//! The scenarios under `scenarios/`, compiled into the binary so `tscope simulate pipe1` works
//! from any directory. The files stay the source of truth.

/// `(name, JSON)` of every bundled scenario, in name order.
pub const BUNDLED: [(&str, &str); 9] = [
    ("fifo1", include_str!("../../scenarios/fifo1.json")),
    (
        "netbsd-seed",
        include_str!("../../scenarios/netbsd-seed.json"),
    ),
    (
        "netbsd-seed-vfsmix",
        include_str!("../../scenarios/netbsd-seed-vfsmix.json"),
    ),
    ("pingpong", include_str!("../../scenarios/pingpong.json")),
    ("pipe1", include_str!("../../scenarios/pipe1.json")),
    ("untar", include_str!("../../scenarios/untar.json")),
    ("vfsmix", include_str!("../../scenarios/vfsmix.json")),
    (
        "write-only",
        include_str!("../../scenarios/write-only.json"),
    ),
    (
        "write-stat",
        include_str!("../../scenarios/write-stat.json"),
    ),
];

/// The JSON of bundled scenario `name`.
pub fn get(name: &str) -> Option<&'static str> {
    BUNDLED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The bundled scenario names.
pub fn names() -> Vec<&'static str> {
    BUNDLED.iter().map(|(n, _)| *n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Scenario;

    #[test]
    fn every_bundled_scenario_parses_and_is_named_after_its_file() {
        for (name, text) in BUNDLED {
            let s = Scenario::from_json(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, name);
        }
    }
}
