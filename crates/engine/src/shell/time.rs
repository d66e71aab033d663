//! The `time` keyword: how long a pipeline took on the simulated clock,
//! and the CPU its commands used, in `TIMEFORMAT`'s format (bash's default
//! without it, POSIX's with `time -p`).

/// bash's format when `TIMEFORMAT` is unset.
const BASH_FORMAT: &str = "\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS";
/// `time -p`.
const POSIX_FORMAT: &str = "real %2R\nuser %2U\nsys %2S";

/// User and system CPU time, and the wall time processes take to start
/// and exit (fork, exec, the loader: about a millisecond each), which the
/// simulated clock leaves out; in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub user_us: u64,
    pub sys_us: u64,
    pub startup_us: u64,
}

/// A process's start and exit: wall time, and its user and system share.
const STARTUP_US: (u64, u64, u64) = (1_150, 420, 610);

impl CpuTime {
    /// What a command named `name` that ran `ran_ms` adds: a waiting
    /// command (sleep, ssh, srun, which wait on a timer or a peer) uses
    /// almost none; perftest and nccl-tests poll their completion queues
    /// and stay on the CPU; the driver's tools spend their time in ioctls;
    /// the rest work in user space and read files.
    pub fn of_command(name: &str, ran_ms: u64) -> CpuTime {
        let (user, sys) = match name {
            "sleep" | "ping" | "ssh" | "scp" | "srun" | "salloc" | "sbatch" | "timeout" | "watch" | "wait" | "read" | "pdsh" | "clush" => (0.002, 0.004),
            "nvidia-smi" | "dcgmi" | "nvidia-bug-report.sh" | "ipmitool" => (0.06, 0.52),
            "mpirun" => (0.95, 0.04),
            name if name.ends_with("_perf") || (name.starts_with("ib_") && (name.ends_with("_bw") || name.ends_with("_lat"))) => (0.95, 0.04),
            _ => (0.55, 0.3),
        };
        let ran_us = ran_ms as f64 * 1e3;
        let (startup, startup_user, startup_sys) = STARTUP_US;
        CpuTime { user_us: (ran_us * user) as u64 + startup_user, sys_us: (ran_us * sys) as u64 + startup_sys, startup_us: startup }
    }

    pub fn add(self, other: CpuTime) -> CpuTime {
        CpuTime {
            user_us: self.user_us.saturating_add(other.user_us),
            sys_us: self.sys_us.saturating_add(other.sys_us),
            startup_us: self.startup_us.saturating_add(other.startup_us),
        }
    }

    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            startup_us: self.startup_us.saturating_sub(earlier.startup_us),
        }
    }
}

/// The report `time` prints on the shell's standard error: `TIMEFORMAT`
/// when set (empty: no report), else bash's or POSIX's format, and a
/// newline. `ran_ms` is the time the simulated clock moved.
pub fn report(timeformat: Option<&str>, posix: bool, ran_ms: u64, cpu: CpuTime) -> String {
    let real_us = ran_ms.saturating_mul(1000).saturating_add(cpu.startup_us);
    let format = match timeformat {
        _ if posix => POSIX_FORMAT,
        Some(format) => format,
        None => BASH_FORMAT,
    };
    if format.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // %[p][l]R|U|S, %P, %%: bash's specifiers; anything else is printed as is.
        let mut precision = 3;
        if let Some(digit) = chars.peek().and_then(|c| c.to_digit(10)) {
            precision = digit.min(3);
            chars.next();
        }
        let long = chars.peek() == Some(&'l');
        if long {
            chars.next();
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('R') => out.push_str(&seconds(real_us, precision, long)),
            Some('U') => out.push_str(&seconds(cpu.user_us, precision, long)),
            Some('S') => out.push_str(&seconds(cpu.sys_us, precision, long)),
            Some('P') => {
                let share = if real_us == 0 { 0.0 } else { (cpu.user_us + cpu.sys_us) as f64 * 100.0 / real_us as f64 };
                out.push_str(&format!("{share:.2}"));
            }
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out.push('\n');
    out
}

/// `us` as bash prints a time: seconds with `precision` digits (truncated,
/// not rounded), or minutes and seconds (`1m2.345s`) in the long form.
fn seconds(us: u64, precision: u32, long: bool) -> String {
    let ms = us / 1000;
    let fraction = match precision {
        0 => String::new(),
        p => format!(".{:0width$}", (ms % 1000) / 10u64.pow(3 - p), width = p as usize),
    };
    if long {
        format!("{}m{}{fraction}s", ms / 60_000, (ms / 1000) % 60)
    } else {
        format!("{}{fraction}", ms / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_default_posix_and_timeformat() {
        let cpu = CpuTime { user_us: 18_400, sys_us: 4_900, startup_us: 1_150 };
        assert_eq!(report(None, false, 20, cpu), "\nreal\t0m0.021s\nuser\t0m0.018s\nsys\t0m0.004s\n");
        assert_eq!(report(None, true, 3_725_518, cpu), "real 3725.51\nuser 0.01\nsys 0.00\n");
        assert_eq!(report(None, false, 3_725_518, cpu).lines().nth(1), Some("real\t62m5.519s"));
        let half = CpuTime { user_us: 500_000, sys_us: 500_000, startup_us: 0 };
        assert_eq!(report(Some("%R s, %0lR, %P%%"), false, 2_000, half), "2.000 s, 0m2s, 50.00%\n");
        assert_eq!(report(Some(""), false, 10, cpu), "");
    }

    #[test]
    fn waiting_uses_no_cpu_and_polling_most_of_it() {
        assert!(CpuTime::of_command("sleep", 5_000).user_us < 50_000);
        assert!(CpuTime::of_command("ib_write_bw", 5_000).user_us > 4_000_000);
        assert!(CpuTime::of_command("all_reduce_perf", 5_000).user_us > 4_000_000);
    }
}
