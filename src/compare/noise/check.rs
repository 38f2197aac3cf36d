//! Which `--noise` profiles may stand for this machine's noise between runs: separate runs
//! (not copies), of the machine compared.

use super::super::Input;
use crate::probe::Profile;

/// One `--noise` profile as read: where from, the SHA-256 of its bytes, and the profile.
#[derive(Debug, Clone)]
pub struct NoiseInput {
    pub path: std::path::PathBuf,
    pub sha256: [u8; 32],
    pub profile: Profile,
}

/// The machine a profile names: its `host_id` where it carries one, else its CPU facts.
fn same_machine(a: &Profile, b: &Profile) -> bool {
    let (x, y) = (&a.machine, &b.machine);
    match (&x.host_id, &y.host_id) {
        (Some(p), Some(q)) => p == q,
        _ => machine_facts(a) == machine_facts(b),
    }
}

/// The CPU facts a profile carries without a `host_id`.
fn machine_facts(p: &Profile) -> (Option<&str>, Option<&str>, Option<u32>, Option<u32>, usize) {
    let m = &p.machine;
    (
        m.cpu_vendor.as_deref(),
        m.cpu_model.as_deref(),
        m.cpu_family,
        m.cpu_model_number,
        m.cpus_online,
    )
}

/// The machine of `p`, in words.
fn machine_words(p: &Profile) -> String {
    let m = &p.machine;
    match &m.host_id {
        Some(id) => format!("host_id {id}"),
        None => format!(
            "no host_id; CPU '{}', {} CPUs",
            m.cpu_model.as_deref().unwrap_or("unknown"),
            m.cpus_online
        ),
    }
}

/// Refuses `--noise` profiles that are not separate runs of the machine compared, naming the
/// file and why: the same file twice (the same SHA-256), the same run twice (one machine, one
/// `created_unix_s`), and, unless `other_hosts`, a profile of a machine none of `inputs` was
/// measured on, or of another machine than the first noise profile. Each would pass for noise
/// it is not: copies have no spread, and other machines' spread is not this machine's.
pub fn check_noise(
    inputs: &[Input],
    noise: &[NoiseInput],
    other_hosts: bool,
) -> Result<(), String> {
    for (k, n) in noise.iter().enumerate() {
        let path = n.path.display();
        for earlier in &noise[..k] {
            let first = earlier.path.display();
            if earlier.sha256 == n.sha256 {
                return Err(format!(
                    "--noise '{path}' has the same content as '{first}' (the same SHA-256): \
                     each noise profile must be a run of its own"
                ));
            }
            if same_machine(&earlier.profile, &n.profile)
                && earlier.profile.created_unix_s == n.profile.created_unix_s
            {
                return Err(format!(
                    "--noise '{path}' is the same run as '{first}' ({}, created_unix_s {}): \
                     each noise profile must be a run of its own",
                    machine_words(&n.profile),
                    n.profile.created_unix_s
                ));
            }
        }
        if other_hosts {
            continue;
        }
        let unlike = |what: &str, p: &Profile| {
            format!(
                "--noise '{path}' was measured on another machine ({}) than {what} ({}): its \
                 spread is not that machine's noise between runs; give profiles of the machine \
                 compared, or pass --noise-from-other-hosts to use it anyway",
                machine_words(&n.profile),
                machine_words(p)
            )
        };
        match noise.first() {
            Some(first) if k > 0 => {
                if !same_machine(&first.profile, &n.profile) {
                    return Err(unlike(
                        &format!("the first noise profile '{}'", first.path.display()),
                        &first.profile,
                    ));
                }
            }
            _ => {
                if !inputs.iter().any(|i| same_machine(&i.profile, &n.profile)) {
                    if let Some(i) = inputs.first() {
                        return Err(unlike("the compared profiles", &i.profile));
                    }
                }
            }
        }
    }
    Ok(())
}
