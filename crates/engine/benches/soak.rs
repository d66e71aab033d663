//! The soak: 10,000 command lines in one session. Prints, for each block of
//! 1,000 lines, the time per line and the live memory after it (counted by
//! this binary's allocator): both should stay flat. Not a test: figures.
//! Run: cargo bench -p clusterlab-engine --bench soak

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clusterlab_engine::{load, Session};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(pointer, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const LINES: &[&str] = &[
    "nvidia-smi",
    "nvidia-smi -q -i 0 | head -50",
    "ibstat | grep -c Rate",
    "echo $HOSTNAME && hostname",
    "ssh gpu-002 'nvidia-smi -L | wc -l'",
    "pdsh -a 'systemctl is-active nvidia-fabricmanager'",
    "sinfo; squeue",
    "perfquery -x 100 1",
    "dmesg | tail -5",
    "awk 'BEGIN{for(i=0;i<100;i++) s+=i; print s}'",
];

fn main() {
    let lab = load(include_str!("../../../labs/slow-rail.toml")).expect("a valid lab");
    let mut session = Session::new(lab.instantiate(1), lab.first_host());
    println!("| lines | µs per line (this block) | live memory after |\n|---|---|---|");
    let mut at = 0;
    for block in 1..=10 {
        let start = Instant::now();
        for _ in 0..1_000 {
            let transcript = session.run(LINES[at % LINES.len()]);
            std::hint::black_box(transcript);
            at += 1;
        }
        let per_line = start.elapsed().as_micros() as f64 / 1_000.0;
        println!("| {} | {per_line:.1} | {:.2} MiB |", block * 1_000, LIVE.load(Ordering::Relaxed) as f64 / (1 << 20) as f64);
    }
}
