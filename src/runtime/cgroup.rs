//! CPU throttling of the process's cgroup: the time the kernel held its threads back because
//! the cgroup had used up its CPU quota (`cpu.cfs_quota_us` in cgroup v1, `cpu.max` in v2), as
//! its `cpu.stat` counts it (`throttled_time`, ns, in v1's cpu controller; `throttled_usec` in
//! v2). Linux only; elsewhere `Throttle::process()` is `None` and throttling is unknown.
//!
//! A quota may be set on the process's own cgroup or any of its ancestors (a container's and its
//! pod's): every level's `cpu.stat` is read, and a span's throttling is the most any level
//! throttled over it. The cgroup is the one the process is in when the first monitor starts.

/// Levels read at most, from the process's own cgroup up.
const MAX_LEVELS: usize = 8;

/// Cumulative throttled ms of each level, at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throttled {
    ms: [f64; MAX_LEVELS],
    levels: usize,
}

impl Throttled {
    /// One level's count, for tests.
    #[cfg(test)]
    pub fn one(ms: f64) -> Self {
        let mut t = Throttled { ms: [0.0; MAX_LEVELS], levels: 1 };
        t.ms[0] = ms;
        t
    }

    /// Ms throttled from `earlier` to this reading: the most of any level (each level counts the
    /// throttling of its own quota; one level never counts another's).
    pub fn since(&self, earlier: &Throttled) -> f64 {
        let n = self.levels.min(earlier.levels);
        self.ms[..n].iter().zip(&earlier.ms[..n]).map(|(b, a)| b - a).fold(0.0, f64::max)
    }
}

#[cfg(any(target_os = "linux", test))]
/// Which cgroup version a `cpu.stat` is of: the field and its unit differ.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Version {
    V1,
    V2,
}

#[cfg(any(target_os = "linux", test))]
impl Version {
    fn field(self) -> (&'static str, f64) {
        match self {
            Version::V1 => ("throttled_time", 1e-6), // ns
            Version::V2 => ("throttled_usec", 1e-3),
        }
    }
}

#[cfg(any(target_os = "linux", test))]
/// The throttled ms a `cpu.stat` says, if it has the field.
fn parse_stat(stat: &str, version: Version) -> Option<f64> {
    let (field, to_ms) = version.field();
    stat.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(' ')?.trim().parse::<f64>().ok()).map(|v| v * to_ms)
}

#[cfg(any(target_os = "linux", test))]
/// The process's cgroup of the cpu controller, from /proc/self/cgroup: v1's cpu hierarchy
/// where it is mounted, else the v2 one.
fn own_cgroup(proc_cgroup: &str) -> Option<(Version, &str)> {
    let v1 = proc_cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        controllers.split(',').any(|c| c == "cpu").then_some((Version::V1, path))
    });
    v1.or_else(|| proc_cgroup.lines().find_map(|l| l.strip_prefix("0::").map(|p| (Version::V2, p))))
}

#[cfg(any(target_os = "linux", test))]
/// Where the hierarchy of `version` is mounted, from /proc/self/mountinfo: (the cgroup at the
/// mount's root, the mount point).
fn mount(mountinfo: &str, version: Version) -> Option<(&str, &str)> {
    mountinfo.lines().find_map(|l| {
        let (before, after) = l.split_once(" - ")?;
        let f: Vec<&str> = before.split(' ').collect();
        let a: Vec<&str> = after.split(' ').collect();
        let fits = match version {
            Version::V1 => a.first() == Some(&"cgroup") && a.get(2).is_some_and(|o| o.split(',').any(|c| c == "cpu")),
            Version::V2 => a.first() == Some(&"cgroup2"),
        };
        fits.then(|| Some((*f.get(3)?, *f.get(4)?))).flatten()
    })
}

#[cfg(any(target_os = "linux", test))]
/// The directories of the process's cgroup and its ancestors up to the mount's root, nearest first.
fn levels(proc_cgroup: &str, mountinfo: &str) -> Option<(Version, Vec<String>)> {
    let (version, path) = own_cgroup(proc_cgroup)?;
    let (root, at) = mount(mountinfo, version)?;
    // Inside a cgroup namespace the path is relative to the namespace's root, which is mounted.
    let rel = path.strip_prefix(root).filter(|r| r.is_empty() || r.starts_with('/') || root == "/").unwrap_or(path);
    let mut parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let mut dirs = Vec::new();
    loop {
        dirs.push(std::iter::once(at).chain(parts.iter().copied()).collect::<Vec<_>>().join("/"));
        if parts.pop().is_none() || dirs.len() == MAX_LEVELS {
            break;
        }
    }
    Some((version, dirs))
}

#[cfg(target_os = "linux")]
pub use linux::Throttle;

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::fs::File;
    use std::os::unix::fs::FileExt;
    use std::sync::OnceLock;

    /// The `cpu.stat` of each level, kept open: a reading is one pread a level.
    pub struct Throttle {
        version: Version,
        files: Vec<File>,
    }

    impl Throttle {
        /// The process's, found once; `None` where no cgroup's `cpu.stat` counts throttling.
        pub fn process() -> Option<&'static Throttle> {
            static THROTTLE: OnceLock<Option<Throttle>> = OnceLock::new();
            THROTTLE.get_or_init(Throttle::find).as_ref()
        }

        fn find() -> Option<Throttle> {
            let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let (version, dirs) = levels(&own, &mounts)?;
            let files: Vec<File> = dirs.iter().filter_map(|d| File::open(format!("{d}/cpu.stat")).ok()).filter(|f| read(f, version).is_some()).collect();
            (!files.is_empty()).then_some(Throttle { version, files })
        }

        /// Every level's throttled ms now; `None` if a level can no longer be read.
        pub fn read(&self) -> Option<Throttled> {
            let mut t = Throttled { ms: [0.0; MAX_LEVELS], levels: self.files.len() };
            for (slot, f) in t.ms.iter_mut().zip(&self.files) {
                *slot = read(f, self.version)?;
            }
            Some(t)
        }
    }

    fn read(f: &File, version: Version) -> Option<f64> {
        let mut buf = [0u8; 512];
        let n = f.read_at(&mut buf, 0).ok()?;
        parse_stat(std::str::from_utf8(&buf[..n]).ok()?, version)
    }
}

/// No cgroups: throttling is unknown.
#[cfg(not(target_os = "linux"))]
pub struct Throttle;

#[cfg(not(target_os = "linux"))]
impl Throttle {
    pub fn process() -> Option<&'static Throttle> {
        None
    }

    pub fn read(&self) -> Option<Throttled> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS_HYBRID: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";

    #[test]
    fn v1_the_cpu_controllers_hierarchy_nearest_level_first() {
        let own = "9:name=systemd:/\n4:memory:/x\n2:cpuacct:/\n1:cpu:/kubepods/pod1/c2\n0::/";
        let (v, dirs) = levels(own, MOUNTS_HYBRID).unwrap();
        assert_eq!(v, Version::V1);
        assert_eq!(dirs, ["/sys/fs/cgroup/cpu/kubepods/pod1/c2", "/sys/fs/cgroup/cpu/kubepods/pod1", "/sys/fs/cgroup/cpu/kubepods", "/sys/fs/cgroup/cpu"]);
        let joint = "3:cpu,cpuacct:/app\n";
        let mounts = "25 20 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct";
        assert_eq!(levels(joint, mounts).unwrap().1, ["/sys/fs/cgroup/cpu,cpuacct/app", "/sys/fs/cgroup/cpu,cpuacct"], "cpu mounted with cpuacct");
        assert_eq!(levels("1:cpu:/\n", MOUNTS_HYBRID).unwrap().1, ["/sys/fs/cgroup/cpu"], "the root: one level, never throttled");
    }

    #[test]
    fn v2_and_a_namespace_whose_root_is_the_mount() {
        let mounts = "30 24 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate";
        let (v, dirs) = levels("0::/system.slice/app.service\n", mounts).unwrap();
        assert_eq!(v, Version::V2);
        assert_eq!(dirs, ["/sys/fs/cgroup/system.slice/app.service", "/sys/fs/cgroup/system.slice", "/sys/fs/cgroup"]);
        let bound = "30 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
        assert_eq!(levels("0::/docker/abc/worker\n", bound).unwrap().1, ["/sys/fs/cgroup/worker", "/sys/fs/cgroup"], "the mount's root stripped");
        assert_eq!(levels("0::/\n", bound).unwrap().1, ["/sys/fs/cgroup"], "cgroup namespace: its root is the mount");
        assert_eq!(levels("0::/a\n", "1 0 0:1 / / rw - ext4 /dev/root rw"), None, "not mounted");
        let deep = format!("0::/{}\n", (0..20).map(|i| i.to_string()).collect::<Vec<_>>().join("/"));
        assert_eq!(levels(&deep, mounts).unwrap().1.len(), MAX_LEVELS, "the nearest levels only");
    }

    #[test]
    fn throttled_time_from_cpu_stat_and_over_a_span_the_most_of_any_level() {
        let v1 = "nr_periods 17\nnr_throttled 13\nthrottled_time 665526718\nnr_bursts 0\n";
        assert!((parse_stat(v1, Version::V1).unwrap() - 665.526718).abs() < 1e-9);
        let v2 = "usage_usec 10\nnr_throttled 2\nthrottled_usec 2500\nnr_bursts 0\n";
        assert_eq!(parse_stat(v2, Version::V2), Some(2.5));
        assert_eq!(parse_stat("usage_usec 10\nuser_usec 5\n", Version::V2), None, "v2 without the cpu controller");
        assert_eq!(parse_stat("throttled_time_x 5\n", Version::V1), None);
        let at = |a: f64, b: f64| Throttled { ms: [a, b, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], levels: 2 };
        assert_eq!(at(100.0, 900.0).since(&at(40.0, 880.0)), 60.0);
        assert_eq!(Throttled::one(5.0).since(&Throttled::one(5.0)), 0.0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reads_as_it_is_found() {
        // Whatever the machine: a reading, when one is found, is a count that never goes back.
        if let Some(t) = Throttle::process() {
            let (a, b) = (t.read().unwrap(), t.read().unwrap());
            assert!(b.since(&a) >= 0.0);
        }
    }
}
