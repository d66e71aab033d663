//! PCI identities of the devices the presets hold, shared by `lspci` and
//! `nvidia-smi -q` so that both name a device the same way.
//!
//! Device and subsystem ids are facts from ../shared/reference/gpu (the `-q`
//! captures' `Device Id`/`Sub System Id`, lspci-Dnn_hgx-h100_vm-passthrough.txt)
//! and the public PCI ID database.

pub const NVIDIA_VENDOR: u16 = 0x10de;
pub const MELLANOX_VENDOR: u16 = 0x15b3;

/// What lspci prints for a GPU's device id, after `NVIDIA Corporation `.
pub fn gpu_device_name(device_id: u16) -> String {
    match device_id {
        0x2330 => "GH100 [H100 SXM5 80GB]".to_string(),
        0x2335 => "GH100 [H200 SXM 141GB]".to_string(),
        0x20b2 => "GA100 [A100 SXM4 80GB]".to_string(),
        other => format!("Device {other:04x}"),
    }
}

/// The board's subsystem device id (vendor NVIDIA), as `Sub System Id` shows it.
pub fn gpu_subsystem(device_id: u16) -> u16 {
    match device_id {
        0x2330 => 0x16c1,
        0x2335 => 0x18be,
        0x20b2 => 0x1463,
        other => other,
    }
}

/// `Product Architecture` in `nvidia-smi -q`.
pub fn gpu_architecture(device_id: u16) -> &'static str {
    match device_id {
        0x2330 | 0x2335 => "Hopper",
        0x20b2 => "Ampere",
        _ => "N/A",
    }
}

/// CUDA compute capability, as `--query-gpu=compute_cap` prints it.
pub fn compute_capability(device_id: u16) -> Option<&'static str> {
    match device_id {
        0x2330 | 0x2335 => Some("9.0"),
        0x20b2 => Some("8.0"),
        _ => None,
    }
}

/// An HCA's PCI device id and lspci name from its part id (`MT4129` → 0x1021).
pub fn hca_device(part_id: u32) -> (u16, String) {
    match part_id {
        4129 => (0x1021, "MT2910 Family [ConnectX-7]".to_string()),
        4123 => (0x101b, "MT28908 Family [ConnectX-6]".to_string()),
        other => (other as u16, format!("Device {other:04x}")),
    }
}
