//! The accelerator qemu runs guest code with: what was asked, what /dev/kvm offers, what ran.

use serde::{Deserialize, Serialize};

use crate::detect::host::KvmHost;
use crate::error::Result;
use crate::fail as bail;
use crate::vm::boot::qemu::Accel;

/// How qemu should run guest code, as asked (what it used is [`AccelChoice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestedAccel {
    /// KVM when /dev/kvm offers hardware virtualisation, else TCG (with a message).
    Auto,
    /// Hardware virtualisation (kvm_intel / kvm_amd).
    Kvm,
    /// qemu's binary translator: emulation, not virtualisation.
    Tcg,
}

/// Which accelerator ran the guests, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AccelChoice {
    /// `auto`, `kvm` or `tcg`, as asked.
    pub requested: String,
    pub used: Accel,
    /// True under TCG: every guest instruction was emulated, so guest figures are emulation
    /// costs, not virtualisation costs.
    pub emulation: bool,
    /// The module behind /dev/kvm, if any (`kvm_intel`, `kvm_amd`, `kvm_pvm`).
    pub kvm_module: Option<String>,
    pub note: Option<String>,
}

/// Decides the accelerator from what was asked and what backs /dev/kvm.
pub(crate) fn choose_accel(requested: RequestedAccel, kvm: &KvmHost) -> Result<AccelChoice> {
    let pvm_note = "/dev/kvm is backed by kvm_pvm, a software hypervisor that runs only \
                    PVM-built guest kernels (stock kernels hit emulation failures)";
    let (used, note) = match requested {
        RequestedAccel::Tcg => (Accel::Tcg, None),
        RequestedAccel::Kvm if kvm.dev_kvm && kvm.hardware_virtualisation => (Accel::Kvm, None),
        RequestedAccel::Kvm if kvm.module.as_deref() == Some("kvm_pvm") => {
            bail!("--accel kvm: {pvm_note}; use --accel tcg (emulation) or a host with kvm_intel/kvm_amd")
        }
        RequestedAccel::Kvm if !kvm.dev_kvm => {
            bail!("--accel kvm: /dev/kvm does not exist; use --accel tcg")
        }
        RequestedAccel::Kvm => (Accel::Kvm, Some("module behind /dev/kvm unknown".into())),
        RequestedAccel::Auto if kvm.dev_kvm && kvm.hardware_virtualisation => (Accel::Kvm, None),
        RequestedAccel::Auto if kvm.module.as_deref() == Some("kvm_pvm") => {
            (Accel::Tcg, Some(format!("{pvm_note}: falling back to TCG")))
        }
        RequestedAccel::Auto => (
            Accel::Tcg,
            Some("no hardware virtualisation through /dev/kvm: falling back to TCG".into()),
        ),
    };
    Ok(AccelChoice {
        requested: format!("{requested:?}").to_lowercase(),
        used,
        emulation: used == Accel::Tcg,
        kvm_module: kvm.module.clone(),
        note,
    })
}
