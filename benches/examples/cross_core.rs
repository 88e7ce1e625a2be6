//! What reading data another core just wrote costs, on the game's own
//! access pattern (issue 21: the 20,000-unit game frame's parallel
//! efficiency).
//!
//! Each round, the builder thread (pinned to the first allowed core) moves
//! 20,000 points a step and buckets them into a grid by a counting sort,
//! as the game's `build_grid` does; then 20,000 nearest-neighbour searches
//! run over that grid (the game's `aim`), timed, either on the builder's
//! own core (`same`) or on a thread pinned to the other core (`other`),
//! which must pull every cache line it reads out of the builder's cache.
//! The two modes alternate round by round, so the machine's load hits
//! both alike; the medians and their ratio are printed. No scheduler, no
//! ECS: what is left is the hardware.
//!
//! `cargo run --release -p sluice-benches --example cross_core [-- ROUNDS]`
//! (Linux, two cores or more).

#![allow(missing_docs)]

#[cfg(target_os = "linux")]
fn main() {
    linux::main();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("cross_core pins its threads with Linux's sched_setaffinity");
}

/// Everything but `main`: thread pinning is Linux's.
#[cfg(target_os = "linux")]
mod linux {
    use std::sync::{Arc, Barrier, Mutex};
    use std::time::{Duration, Instant};

    const POINTS: usize = 20_000;
    const SIDE: f32 = 512.0;
    const RANGE: f32 = 8.0;
    const DIM: usize = (SIDE / RANGE) as usize;

    #[derive(Clone, Copy)]
    struct Cell {
        id: u64,
        x: f32,
        y: f32,
    }

    /// The points, their grid and the queries, as the game keeps them.
    struct Grid {
        xs: Vec<f32>,
        ys: Vec<f32>,
        starts: Vec<u32>,
        keys: Vec<u32>,
        cells: Vec<Cell>,
    }

    fn cell_of(x: f32, y: f32) -> (usize, usize) {
        let c = |v: f32| (v / RANGE).clamp(0.0, (DIM - 1) as f32) as usize;
        (c(x), c(y))
    }

    impl Grid {
        fn new() -> Self {
            let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 / (1u64 << 24) as f32 * SIDE
            };
            let (xs, ys) = (0..POINTS).map(|_| (next(), next())).unzip();
            Self {
                xs,
                ys,
                starts: vec![0; DIM * DIM + 1],
                keys: Vec::with_capacity(POINTS),
                cells: Vec::with_capacity(POINTS),
            }
        }

        /// Moves every point a little (the game's `integrate`) and rebuilds the
        /// grid (its `build_grid`): every byte the searches read is written.
        fn step_and_build(&mut self, round: u32) {
            let wobble = if round.is_multiple_of(2) { 0.25 } else { -0.25 };
            for (x, y) in self.xs.iter_mut().zip(&mut self.ys) {
                *x = (*x + wobble).clamp(0.0, SIDE - 0.01);
                *y = (*y - wobble).clamp(0.0, SIDE - 0.01);
            }
            self.keys.clear();
            self.starts.fill(0);
            for (&x, &y) in self.xs.iter().zip(&self.ys) {
                let (cx, cy) = cell_of(x, y);
                let key = (cy * DIM + cx) as u32;
                self.keys.push(key);
                self.starts[key as usize + 1] += 1;
            }
            let mut sum = 0;
            for start in &mut self.starts {
                sum += *start;
                *start = sum;
            }
            self.cells.clear();
            self.cells.resize(
                POINTS,
                Cell {
                    id: 0,
                    x: 0.0,
                    y: 0.0,
                },
            );
            for (id, &key) in self.keys.iter().enumerate() {
                let slot = &mut self.starts[key as usize];
                self.cells[*slot as usize] = Cell {
                    id: id as u64,
                    x: self.xs[id],
                    y: self.ys[id],
                };
                *slot += 1;
            }
            self.starts.copy_within(0..DIM * DIM, 1);
            self.starts[0] = 0;
        }

        /// Every `every`-th point's nearest other point within `RANGE` (the
        /// game's `Grid::nearest`), summed so that nothing is optimised away.
        fn search(&self, every: usize) -> u64 {
            let mut total = 0u64;
            for (&x, &y) in self.xs.iter().zip(&self.ys).step_by(every) {
                let (x0, y0) = cell_of(x - RANGE, y - RANGE);
                let (x1, y1) = cell_of(x + RANGE, y + RANGE);
                let mut best = (f32::MAX, u64::MAX);
                for cy in y0..=y1 {
                    let row = cy * DIM;
                    let cells = self.starts[row + x0] as usize..self.starts[row + x1 + 1] as usize;
                    for cell in &self.cells[cells] {
                        let (dx, dy) = (cell.x - x, cell.y - y);
                        let d = dx * dx + dy * dy;
                        if d > 0.0 && d <= RANGE * RANGE && (d, cell.id) < best {
                            best = (d, cell.id);
                        }
                    }
                }
                total = total.wrapping_add(best.1);
            }
            total
        }
    }

    /// Pins the calling thread to `cpu`.
    fn pin(cpu: usize) {
        // SAFETY: `set` is a zeroed `cpu_set_t` (a plain bit set) that
        // `CPU_SET` fills; `sched_setaffinity(0, ..)` reads it for the calling
        // thread and keeps no pointer.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set),
                0,
                "cannot pin to cpu {cpu}"
            );
        }
    }

    /// The first two CPUs this process may run on.
    fn two_cpus() -> Option<(usize, usize)> {
        // SAFETY: `sched_getaffinity` fills the zeroed set for this process;
        // `CPU_ISSET` reads it.
        let mut cpus = (0..libc::CPU_SETSIZE as usize).filter(|&cpu| unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &raw mut set) == 0
                && libc::CPU_ISSET(cpu, &set)
        });
        Some((cpus.next()?, cpus.next()?))
    }

    fn median(times: &mut [Duration]) -> Duration {
        times.sort();
        times[times.len() / 2]
    }

    /// The median search time on the builder's core and on the other one,
    /// alternating round by round, and a checksum.
    fn measure(cpus: (usize, usize), rounds: u32, every: usize) -> (Duration, Duration, u64) {
        let (first, second) = cpus;
        let grid = Arc::new(Mutex::new(Grid::new()));
        let (go, done) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
        let searcher = {
            let (grid, go, done) = (Arc::clone(&grid), Arc::clone(&go), Arc::clone(&done));
            std::thread::spawn(move || {
                pin(second);
                let (mut times, mut sink) = (Vec::new(), 0u64);
                for _ in 0..rounds {
                    go.wait();
                    let grid = grid.lock().expect("not poisoned");
                    let begin = Instant::now();
                    sink = sink.wrapping_add(grid.search(every));
                    times.push(begin.elapsed());
                    drop(grid);
                    done.wait();
                }
                (times, sink)
            })
        };
        pin(first);
        let (mut same, mut sink) = (Vec::new(), 0u64);
        for round in 0..rounds * 2 {
            grid.lock().expect("not poisoned").step_and_build(round);
            if round.is_multiple_of(2) {
                let grid = grid.lock().expect("not poisoned");
                let begin = Instant::now();
                sink = sink.wrapping_add(grid.search(every));
                same.push(begin.elapsed());
            } else {
                go.wait();
                done.wait();
            }
        }
        let (mut other, theirs) = searcher.join().expect("the searcher ran");
        // The first rounds warm the caches and the clocks.
        let skip = rounds as usize / 10;
        (
            median(&mut same[skip..]),
            median(&mut other[skip..]),
            sink.wrapping_add(theirs),
        )
    }

    pub fn main() {
        let rounds: u32 = std::env::args()
            .nth(1)
            .and_then(|arg| arg.parse().ok())
            .unwrap_or(400)
            .max(10);
        let Some(cpus) = two_cpus() else {
            eprintln!("cross_core needs two CPUs");
            return;
        };
        println!(
            "{POINTS} points moved and bucketed on cpu {} each round, then searched on cpu {} \
             (the builder's) or cpu {} (the other), alternating, {rounds} rounds each; medians:",
            cpus.0, cpus.0, cpus.1
        );
        println!("  searches | builder's core | other core | other / builder's | checksum");
        for every in [1, 8, 32] {
            let (same, other, sink) = measure(cpus, rounds, every);
            println!(
                "  {:>8} | {same:>14.1?} | {other:>10.1?} | {:>17.3}x | {sink:x}",
                POINTS / every,
                other.as_secs_f64() / same.as_secs_f64()
            );
        }
    }
}
