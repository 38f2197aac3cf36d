use std::collections::BTreeMap;

use super::*;

fn read<T: serde::de::DeserializeOwned>(path: &str) -> T {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap()
}

/// One sample line: name, labels, value (the test's own reader of what [`Exposition`] writes).
type Sample = (String, BTreeMap<String, String>, f64);

/// Every sample of `text`, after checking its shape: `# HELP` and `# TYPE … gauge` before
/// each family's samples, each family once, every name in [`FAMILIES`], `# EOF` last.
fn samples(text: &str) -> Vec<Sample> {
    assert!(text.ends_with("\n# EOF\n"), "ends in # EOF: {text}");
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l == "# EOF" {
            assert!(lines.peek().is_none(), "# EOF is the last line");
            break;
        }
        let name = l
            .strip_prefix("# HELP ")
            .expect(l)
            .split(' ')
            .next()
            .unwrap();
        assert!(!seen.iter().any(|s| s == name), "{name} written once");
        assert!(FAMILIES.iter().any(|f| f.name == name), "{name} listed");
        seen.push(name.to_string());
        assert_eq!(lines.next(), Some(format!("# TYPE {name} gauge").as_str()));
        while let Some(s) = lines.next_if(|l| !l.starts_with('#')) {
            let (series, value) = s.rsplit_once(' ').unwrap();
            let (n, labels) = series.split_once('{').unwrap();
            assert_eq!(n, name);
            let mut map = BTreeMap::new();
            for pair in labels.trim_end_matches('}').split("\",") {
                let (k, v) = pair.split_once("=\"").unwrap();
                map.insert(k.to_string(), v.trim_end_matches('"').to_string());
            }
            out.push((n.to_string(), map, value.parse().unwrap()));
        }
    }
    out
}

fn find<'a>(s: &'a [Sample], name: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    s.iter()
        .filter(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(v))
        })
        .collect()
}

fn value(s: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let found = find(s, name, labels);
    assert_eq!(found.len(), 1, "one {name} {labels:?}");
    found[0].2
}

#[test]
fn families_follow_the_naming_conventions() {
    for (i, f) in FAMILIES.iter().enumerate() {
        assert!(f.name.starts_with("tscope_"), "{}", f.name);
        assert!(
            f.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{} is snake_case",
            f.name
        );
        let unit = ["_seconds", "_info", "_ratio"]
            .iter()
            .any(|u| f.name.ends_with(u));
        let unitless = ["tscope_source_supported", "tscope_verdict"].contains(&f.name);
        assert!(unit || unitless, "{} names its unit", f.name);
        assert!(!f.name.ends_with("_total"), "gauges only");
        // The two formats escape these differently in HELP: never write them.
        assert!(!f.help.contains(['\\', '"', '\n']), "{}'s HELP", f.name);
        assert!(
            !FAMILIES[..i].iter().any(|g| g.name == f.name),
            "{} listed twice",
            f.name
        );
    }
}

#[test]
fn a_profile_gives_its_costs_in_seconds_and_its_machine() {
    let mut p: Profile = read("tests/data/profile-kvm-xeon.json");
    assert!(!profile(&p).contains("host_id="), "no ID, no label");
    p.machine.host_id = Some("3b8fcc1a-900b-4235-9739-60519f328910".into());
    let s = samples(&profile(&p));
    assert!(s.iter().all(|(_, l, _)| l["command"] == "probe"));
    let info = find(&s, "tscope_machine_info", &[]);
    assert_eq!(info.len(), 1);
    let (_, labels, v) = info[0];
    assert_eq!(*v, 1.0);
    assert_eq!(
        labels.get("cpu_vendor").map(String::as_str),
        p.machine.cpu_vendor.as_deref()
    );
    assert_eq!(labels["hypervisor"], "KVM");
    assert_eq!(labels["host_id"], "3b8fcc1a-900b-4235-9739-60519f328910");
    assert_eq!(
        labels.get("clocksource").map(String::as_str),
        p.machine.clocksource.current.as_deref()
    );
    for src in p.sources.iter() {
        let id = [("source", src.id.as_str())];
        let supported = value(&s, "tscope_source_supported", &id);
        assert_eq!(supported, f64::from(u8::from(src.supported)));
        let Some(c) = src.cost_ns else {
            assert!(find(&s, "tscope_source_cost_seconds", &id).is_empty());
            continue;
        };
        let point = value(&s, "tscope_source_cost_seconds", &id);
        let lower = value(&s, "tscope_source_cost_lower_seconds", &id);
        let upper = value(&s, "tscope_source_cost_upper_seconds", &id);
        assert!((point - c.point * 1e-9).abs() <= 1e-12 * point.abs().max(1e-9));
        assert!(lower <= point && point <= upper, "{}", src.id);
    }
    let precise = p.derived.precise_read_ns.unwrap();
    let got = value(&s, "tscope_precise_read_seconds", &[]);
    assert!((got - precise.point * 1e-9).abs() < 1e-15);
    assert!(
        find(&s, "tscope_verdict", &[]).is_empty(),
        "a probe decides nothing"
    );
}

#[test]
fn every_verdict_is_one_hot_over_its_three_states() {
    let d: Detection = read("tests/data/compare/trapped-detect.json");
    let s = samples(&detection(&d));
    assert!(s.iter().all(|(_, l, _)| l["command"] == "detect"));
    for (name, v) in &d.verdicts {
        let (verdict, clock) = name.split_once(':').unwrap_or((name, ""));
        let states: Vec<_> = find(&s, "tscope_verdict", &[("verdict", verdict)])
            .into_iter()
            .filter(|(_, l, _)| l.get("clock").map_or("", String::as_str) == clock)
            .collect();
        assert_eq!(states.len(), 3, "{name}");
        assert_eq!(states.iter().map(|x| x.2).sum::<f64>(), 1.0, "{name}");
        let on = states.iter().find(|x| x.2 == 1.0).unwrap();
        // The fixture predates verdict states: `holds` says yes.
        let state = if v.holds { VerdictState::Yes } else { v.state };
        assert_eq!(on.1["state"], state.label().to_ascii_lowercase(), "{name}");
    }
    let trapped = [("verdict", "rdtsc_trapped"), ("state", "yes")];
    assert_eq!(value(&s, "tscope_verdict", &trapped), 1.0);
    let clock = [("verdict", "vdso_fallback"), ("clock", "monotonic")];
    assert_eq!(find(&s, "tscope_verdict", &clock).len(), 3);
}

#[test]
fn an_inconclusive_verdict_is_neither_yes_nor_no() {
    let mut d: Detection = read("tests/data/compare/trapped-detect.json");
    let sync = d
        .verdicts
        .iter_mut()
        .find(|(n, _)| n == "tsc_unsynchronized");
    sync.unwrap().1 = Verdict::inconclusive("too few handoffs".into(), serde_json::json!({}));
    let s = samples(&detection(&d));
    let at = |state| [("verdict", "tsc_unsynchronized"), ("state", state)];
    assert_eq!(value(&s, "tscope_verdict", &at("inconclusive")), 1.0);
    assert_eq!(value(&s, "tscope_verdict", &at("yes")), 0.0);
    assert_eq!(value(&s, "tscope_verdict", &at("no")), 0.0);
}

#[test]
fn a_report_gives_the_knob_best_speedup_per_scenario_and_model() {
    let r: Report = read("docs/example-report/report.json");
    let s = samples(&report(&r));
    assert!(s.iter().all(|(_, l, _)| l["command"] == "report"));
    let knob = find(&s, "tscope_knob_best_speedup_ratio", &[]);
    assert_eq!(knob.len(), r.simulation.len());
    assert!(knob.iter().all(|(_, _, v)| *v >= 1.0));
    let coarse = value(
        &s,
        "tscope_knob_best_speedup_ratio",
        &[("scenario", "write-stat"), ("model", "linux@6.18")],
    );
    let ws = find(
        &s,
        "tscope_knob_best_speedup_ratio",
        &[("scenario", "write-stat"), ("model", "linux@6.18")],
    );
    assert_eq!(ws[0].1["policy"], "linux:coarse");
    assert_eq!(ws[0].1["stock"], "linux:multigrain");
    // The figures of the report itself (it is regenerated with the docs).
    let raw: serde_json::Value =
        serde_json::from_slice(&std::fs::read("docs/example-report/report.json").unwrap()).unwrap();
    let best = raw["simulation"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["scenario"] == "write-stat" && x["model"] == "linux@6.18")
        .and_then(|x| {
            x["estimates"]
                .as_array()?
                .iter()
                .find(|e| e["policy"] == "linux:coarse")
        })
        .and_then(|e| e["speedup"].as_f64())
        .unwrap();
    assert!((coarse - best).abs() < 1e-12, "{coarse} against {best}");
    let info = find(&s, "tscope_machine_info", &[])[0];
    assert_eq!(
        Some(info.1["microcode"].as_str()),
        raw["environment"]["microcode"].as_str()
    );
    assert_eq!(info.1["hz"], "250");
    assert_eq!(info.1["cpu_stepping"], "1");
    assert!(find(&s, "tscope_verdict", &[]).len() == 3 * r.detect.verdicts.len());
}

#[test]
fn label_values_are_escaped_and_unknown_facts_left_out() {
    let mut p: Profile = read("tests/data/profile-kvm-xeon.json");
    p.machine.cpu_model = Some("a \"quoted\" \\ brand\nline two".into());
    p.machine.kernel_release = None;
    let text = profile(&p);
    assert!(
        text.contains(r#"cpu="a \"quoted\" \\ brand\nline two""#),
        "{text}"
    );
    let info = text
        .lines()
        .find(|l| l.starts_with("tscope_machine_info"))
        .unwrap();
    assert!(!info.contains("kernel="), "{info}");
}

#[test]
fn hz_is_given_only_when_the_coarse_clocks_agree() {
    let mut p: Profile = read("tests/data/profile-kvm-xeon.json");
    // Every coarse source of the profile gets one of `hz`, in turn.
    let coarse = |p: &mut Profile, hz: [f64; 4]| {
        let coarse = p.sources.iter_mut().filter(|s| s.id.ends_with("_coarse"));
        for (s, v) in coarse.zip(hz.into_iter().cycle()) {
            s.implied_hz = Some(v);
        }
    };
    coarse(&mut p, [250.0; 4]);
    let hz = p.implied_hz();
    assert_eq!(hz, Some(250));
    p.quick = true;
    assert_eq!(p.implied_hz(), None, "a quick watch is too short to tell");
    p.quick = false;
    coarse(&mut p, [71.4, 45.5, 30.0, 20.0]);
    assert_eq!(p.implied_hz(), None);
}
