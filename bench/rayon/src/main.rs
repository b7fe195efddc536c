// SPDX-License-Identifier: Apache-2.0
// lantern_rayon_peer - lantern_bench's fork-join kernels on rayon, the peer a fork-join
// user compares with. The kernels are the definitions of bench/workloads.hpp and
// bench/scheduler/*.cpp, one for one (sizes, splits, answers); each repetition is timed
// from the main thread around ThreadPool::install, as lantern_bench times
// Scheduler::run. Two modes:
//  - on its own: runs the kernels on each worker count and prints rows (a table, or with
//    --json the rows of `lantern_bench --json`, the figure under "rayon");
//  - --serve: lantern_bench's child (lantern_bench --peer rayon): one pool of --workers
//    W, one request a line on stdin (a kernel's name), one reply a line on stdout,
//    "SECONDS ANSWER", so that the parent alternates its own repetitions with these.
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

const PROGRAM: &str = "lantern_rayon_peer";

const USAGE: &str = "usage: lantern_rayon_peer [options]

Runs lantern_bench's fork-join kernels on rayon, checks every answer and prints the
median of each kernel on each worker count (one warm-up, then --reps repetitions with
a 10 ms pause before each).

options:
  -h, --help         this text
  --workers LIST     worker counts, e.g. 1,2 (default: 1 and every CPU allowed)
  --reps N           measured repetitions per kernel, 1 to 1000 (default 5)
  --only NAME[,NAME] run only these kernels (names below)
  --pin              pin worker i to the i-th CPU allowed (or of --cpus), and the
                     main thread to the first
  --cpus LIST        the CPUs to pin to, e.g. 0,1 (implies --pin)
  --json             print the rows as JSON, one object a line (lantern_bench's rows;
                     the figure is \"rayon\", \"lantern\" is null)
  --serve            lantern_bench's child: one pool of --workers W (one count),
                     a kernel's name a line on stdin, \"SECONDS ANSWER\" a line back

kernels (lantern_bench's names):
  fib               fib(32) by rayon::join. Figure: ns per join (/ 3524577 joins).
  skynet            10-ary tree of 1,000,000 leaves, each node's 10 children split
                    by nested rayon::join; sum 499999500000. Figure: ms.
  skynet_taskgroup  the same tree with a rayon::scope per node, 10 spawns. Figure: ms.
  nqueens_tg        nqueens(12) = 14200 with a rayon::scope at every row, a spawn per
                    legal placement down to the leaves (856,188 spawns). Figure: ms.
  parallel_for      sum of 10,000,000 i64, the range halved by rayon::join down to
                    chunks of at most 1024, each chunk adds its sum to one atomic.
                    Figure: ms.
";

// ------------------------------------------------------------------------- kernels

const FIB_N: i32 = 32;
const FIB_VALUE: i64 = 2178309;
const FIB_JOINS: f64 = 3524577.0; // one per call with n >= 2

fn fib(n: i32) -> i64 {
    if n < 2 {
        return n as i64;
    }
    let (a, b) = rayon::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

const SKYNET_LEAVES: i64 = 1_000_000;
const SKYNET_SUM: i64 = 499_999_500_000;
const SKYNET_FANOUT: i64 = 10;

// skynet_join: the sum of the subtree of `size` leaves numbered from `first`; a node's
// children [lo, hi) are halved with join (skynet_join_children in workloads.hpp).
fn skynet_join(first: i64, size: i64) -> i64 {
    if size == 1 {
        return first;
    }
    skynet_join_children(first, size / SKYNET_FANOUT, 0, SKYNET_FANOUT)
}

fn skynet_join_children(first: i64, child: i64, lo: i64, hi: i64) -> i64 {
    if hi - lo == 1 {
        return skynet_join(first + lo * child, child);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) =
        rayon::join(|| skynet_join_children(first, child, lo, mid), || skynet_join_children(first, child, mid, hi));
    a + b
}

// skynet_scope: a scope per node, 10 spawns (skynet_taskgroup in skynet.cpp).
fn skynet_scope(first: i64, size: i64) -> i64 {
    if size == 1 {
        return first;
    }
    let child = size / SKYNET_FANOUT;
    let mut sums = [0i64; SKYNET_FANOUT as usize];
    rayon::scope(|s| {
        for (i, slot) in sums.iter_mut().enumerate() {
            s.spawn(move |_| *slot = skynet_scope(first + i as i64 * child, child));
        }
    });
    sums.iter().sum()
}

const QUEENS_N: usize = 12;
const QUEENS_SOLUTIONS: i64 = 14200;
const QUEENS_ALL: u32 = (1 << QUEENS_N) - 1;

// queens_scope: board state as bit masks (occupied columns, the diagonals attacking
// the next row); a scope per row, a spawn per legal placement (queens_tg).
fn queens_scope(cols: u32, left: u32, right: u32) -> i64 {
    if cols == QUEENS_ALL {
        return 1;
    }
    let mut counts = [0i64; QUEENS_N];
    rayon::scope(|s| {
        let mut slots = counts.iter_mut();
        let mut free = QUEENS_ALL & !(cols | left | right);
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free &= free - 1;
            let slot = slots.next().expect("at most N placements per row");
            s.spawn(move |_| *slot = queens_scope(cols | bit, (left | bit) << 1, (right | bit) >> 1));
        }
    });
    counts.iter().sum()
}

const SUM_N: usize = 10_000_000;
const SUM_GRAIN: usize = 1024;
const SUM_VALUE: i64 = (SUM_N as i64) * (SUM_N as i64 - 1) / 2;

#[inline(never)]
fn sum_chunk(chunk: &[i64]) -> i64 {
    chunk.iter().sum()
}

// parallel_sum: the range halved with join down to chunks of at most SUM_GRAIN, each
// chunk adding its sum to one atomic (lantern::parallel_for's split, tbb's
// simple_partitioner), rather than par_chunks, whose adaptive splitter runs many chunks
// in one task.
fn parallel_sum(data: &[i64]) -> i64 {
    let total = AtomicI64::new(0);
    split_sum(data, 0, data.len(), &total);
    total.load(Ordering::Relaxed)
}

fn split_sum(data: &[i64], begin: usize, end: usize, total: &AtomicI64) {
    if end - begin > SUM_GRAIN {
        let mid = begin + (end - begin) / 2;
        rayon::join(|| split_sum(data, begin, mid, total), || split_sum(data, mid, end, total));
    } else {
        total.fetch_add(sum_chunk(&data[begin..end]), Ordering::Relaxed);
    }
}

// Kernel: one of the above with its row's label, unit, scale and answer.
struct Kernel {
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    per_second: f64, // figure = seconds * per_second
    expected: i64,
}

const KERNELS: [Kernel; 5] = [
    Kernel { name: "fib", label: "fib(32) join", unit: "ns/join", per_second: 1e9 / FIB_JOINS, expected: FIB_VALUE },
    Kernel { name: "skynet", label: "skynet 1M (join)", unit: "ms", per_second: 1e3, expected: SKYNET_SUM },
    Kernel { name: "skynet_taskgroup", label: "skynet 1M (scope)", unit: "ms", per_second: 1e3, expected: SKYNET_SUM },
    Kernel {
        name: "nqueens_tg",
        label: "nqueens(12) scope every row",
        unit: "ms",
        per_second: 1e3,
        expected: QUEENS_SOLUTIONS,
    },
    Kernel { name: "parallel_for", label: "parallel_for sum 10M", unit: "ms", per_second: 1e3, expected: SUM_VALUE },
];

fn kernel(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

// Runner: a pool and the sum's data (made on first use, outside any timing).
struct Runner {
    pool: rayon::ThreadPool,
    workers: usize,
    data: Vec<i64>,
}

impl Runner {
    fn new(workers: usize, cpus: &[usize]) -> Runner {
        let pin: Vec<usize> = cpus.to_vec();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("rayon-{i}"))
            .start_handler(move |i| {
                if !pin.is_empty() {
                    pin_calling_thread(pin[i % pin.len()]);
                }
            })
            .build()
            .unwrap_or_else(|e| fail(&format!("cannot start a pool of {workers} workers: {e}")));
        Runner { pool, workers, data: Vec::new() }
    }

    // run: one repetition of `k`, timed around install; returns (seconds, answer) after
    // checking the answer.
    fn run(&mut self, k: &Kernel) -> (f64, i64) {
        if k.name == "parallel_for" && self.data.is_empty() {
            self.data = (0..SUM_N as i64).collect();
        }
        let data = &self.data;
        let start = Instant::now();
        let answer = self.pool.install(|| match k.name {
            "fib" => fib(FIB_N),
            "skynet" => skynet_join(0, SKYNET_LEAVES),
            "skynet_taskgroup" => skynet_scope(0, SKYNET_LEAVES),
            "nqueens_tg" => queens_scope(0, 0, 0),
            _ => parallel_sum(data),
        });
        let seconds = start.elapsed().as_secs_f64();
        if answer != k.expected {
            eprintln!(
                "{PROGRAM}: WRONG ANSWER: {}, rayon, {} workers: got {answer}, expected {}",
                k.label, self.workers, k.expected
            );
            std::process::exit(2);
        }
        (seconds, answer)
    }
}

// ------------------------------------------------------------------------- pinning

fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

fn pin_calling_thread(cpu: usize) {
    // SAFETY: as above; sched_setaffinity only reads the set.
    let ok = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    };
    if !ok {
        fail(&format!("cannot pin a thread to CPU {cpu}"));
    }
}

// ----------------------------------------------------------------- command line

fn fail(what: &str) -> ! {
    eprintln!("{PROGRAM}: {what}");
    std::process::exit(2);
}

struct Config {
    workers: Vec<usize>,
    reps: usize,
    only: Vec<&'static Kernel>,
    cpus: Vec<usize>, // empty: not pinned
    json: bool,
    serve: bool,
}

fn number_list(option: &str, text: &str, low: usize, high: usize) -> Vec<usize> {
    let list: Vec<usize> = text
        .split(',')
        .map(|t| match t.trim().parse::<usize>() {
            Ok(n) if (low..=high).contains(&n) => n,
            _ => fail(&format!("{option}: '{t}' is not a number from {low} to {high}")),
        })
        .collect();
    list
}

fn parse_command_line() -> Config {
    let mut config =
        Config { workers: Vec::new(), reps: 5, only: Vec::new(), cpus: Vec::new(), json: false, serve: false };
    let mut pin = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |option: &str| args.next().unwrap_or_else(|| fail(&format!("{option} needs a value")));
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            "--workers" => config.workers = number_list("--workers", &value("--workers"), 1, 1024),
            "--reps" => config.reps = number_list("--reps", &value("--reps"), 1, 1000)[0],
            "--cpus" => {
                config.cpus = number_list("--cpus", &value("--cpus"), 0, libc::CPU_SETSIZE as usize - 1);
                pin = true;
            }
            "--only" => {
                for name in value("--only").split(',') {
                    let k = kernel(name).unwrap_or_else(|| {
                        let names: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
                        fail(&format!("--only: unknown kernel '{name}' (kernels: {})", names.join(", ")))
                    });
                    config.only.push(k);
                }
            }
            "--pin" => pin = true,
            "--json" => config.json = true,
            "--serve" => config.serve = true,
            _ => fail(&format!("unknown option '{arg}' (--help lists them)")),
        }
    }
    let allowed = allowed_cpus();
    if config.workers.is_empty() {
        config.workers = vec![1];
        if allowed.len() > 1 {
            config.workers.push(allowed.len());
        }
    }
    if config.serve && config.workers.len() != 1 {
        fail("--serve needs one worker count (--workers W)");
    }
    if pin && config.cpus.is_empty() {
        config.cpus = allowed;
    }
    if config.only.is_empty() {
        config.only = KERNELS.iter().collect();
    }
    config
}

// ----------------------------------------------------------------------- the modes

// serve: lantern_bench's child. Ends at the end of its input.
fn serve(config: &Config) {
    if let Some(&cpu) = config.cpus.first() {
        pin_calling_thread(cpu);
    }
    let mut runner = Runner::new(config.workers[0], &config.cpus);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.unwrap_or_else(|e| fail(&format!("--serve: cannot read a request: {e}")));
        let name = line.trim();
        let k = kernel(name).unwrap_or_else(|| fail(&format!("--serve: unknown request '{name}'")));
        let (seconds, answer) = runner.run(k);
        writeln!(out, "{seconds:.9} {answer}").and_then(|_| out.flush()).unwrap_or_else(|_| std::process::exit(0));
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// json_number: as bench::detail::json_number (%.6g); a number JSON can hold.
fn json_number(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    format!("{}", (v * 1e6).round() / 1e6)
}

struct Row {
    kernel: &'static Kernel,
    workers: usize,
    median: f64,
    min: f64,
    max: f64,
    reps: usize,
}

fn measure(config: &Config) -> Vec<Row> {
    let mut rows = Vec::new();
    for &workers in &config.workers {
        if let Some(&cpu) = config.cpus.first() {
            pin_calling_thread(cpu);
        }
        let mut runner = Runner::new(workers, &config.cpus);
        for &k in &config.only {
            let mut figures = Vec::new();
            for r in 0..=config.reps {
                std::thread::sleep(Duration::from_millis(10)); // the pool falls asleep
                let (seconds, _) = runner.run(k);
                if r > 0 {
                    figures.push(seconds * k.per_second);
                }
            }
            let min = figures.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = figures.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            rows.push(Row { kernel: k, workers, median: median(&mut figures), min, max, reps: config.reps });
        }
    }
    rows
}

fn print_rows(config: &Config, rows: &[Row]) {
    let pinned =
        if config.cpus.is_empty() { "unpinned".to_string() } else { format!("pinned to CPUs {:?}", config.cpus) };
    if config.json {
        for r in rows {
            println!(
                "{{\"benchmark\":{},\"workers\":{},\"unit\":{},\"lantern\":null,\"rayon\":{},\"ratio\":null,\
                 \"target\":\"-\",\"result\":\"info\",\"note\":{},\"peer\":\"rayon\",\
                 \"values\":{{\"rayon_min\":{},\"rayon_max\":{},\"reps\":{}}}}}",
                json_string(r.kernel.label),
                r.workers,
                json_string(r.kernel.unit),
                json_number(r.median),
                json_string(&format!("rayon alone, median of {}, {pinned}", r.reps)),
                json_number(r.min),
                json_number(r.max),
                r.reps
            );
        }
        return;
    }
    println!("{PROGRAM}: rayon, median of {} reps (+1 warm-up), {pinned}", config.reps);
    println!("{:<30} {:>7}  {:<7} {:>10} {:>10} {:>10}", "benchmark", "workers", "unit", "rayon", "min", "max");
    for r in rows {
        println!(
            "{:<30} {:>7}  {:<7} {:>10.3} {:>10.3} {:>10.3}",
            r.kernel.label, r.workers, r.kernel.unit, r.median, r.min, r.max
        );
    }
}

fn main() {
    let config = parse_command_line();
    if config.serve {
        serve(&config);
        return;
    }
    let rows = measure(&config);
    print_rows(&config, &rows);
}
