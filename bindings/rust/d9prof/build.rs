//! Links libd9prof into the program, statically: no environment variable,
//! no rpath, nothing installed.
//!
//! By default the shim (`libprof/*.c`, C depending on libc alone) is
//! compiled here with `cc` and archived with `ar` into `OUT_DIR`, from the
//! copy vendored into the crate (`csrc/`, when packaged) or from the
//! d9prof checkout the crate lives in (`../../../`). `CC` and `AR` (or
//! `CC_<target>`, `TARGET_CC`, ...) choose the tools.
//!
//! Overrides:
//! - `D9PROF_LIB_DIR=DIR`: the libd9prof built in DIR (`make`'s build
//!   directory), its static library; the shared one with `D9PROF_STATIC=0`
//!   or when it is the only one there (cargo passes no rpath for a
//!   dependency: the program then needs `-C link-arg=-Wl,-rpath,DIR` in
//!   its rustflags, or LD_LIBRARY_PATH, and a warning says so);
//! - `D9PROF_PKG_CONFIG=1`: the installed one (`make install`), through
//!   `pkg-config d9prof`: shared, static with `D9PROF_STATIC=1`.
//!
//! Every failure is one line saying what is missing and what to do.
use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    for v in [
        "D9PROF_LIB_DIR",
        "D9PROF_STATIC",
        "D9PROF_PKG_CONFIG",
        "PKG_CONFIG_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let stat = env::var("D9PROF_STATIC").ok();
    let want_static = stat.as_deref() == Some("1");
    if let Ok(dir) = env::var("D9PROF_LIB_DIR") {
        return from_lib_dir(&dir, stat.as_deref() == Some("0"));
    }
    if env::var("D9PROF_PKG_CONFIG").is_ok_and(|v| v == "1") {
        return from_pkg_config(want_static).unwrap_or_else(|e| die(&e));
    }
    match sources() {
        Some(root) => build_shim(&root),
        // neither vendored nor in a checkout: an installed one, or say so
        None => from_pkg_config(want_static).unwrap_or_else(|e| {
            die(&format!(
                "no shim sources (csrc/ or ../../../libprof beside {}) and {e}",
                manifest_dir().display()
            ))
        }),
    }
}

/// One line, as a cargo warning (shown first, and in the failed build
/// script's output), then a failed build: no panic, no backtrace.
fn die(msg: &str) -> ! {
    println!("cargo:warning={msg}");
    std::process::exit(1);
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

/// The directory holding `libprof/` and `include/d9prof.h`: the crate's
/// vendored copy first, then the checkout around it.
fn sources() -> Option<PathBuf> {
    let m = manifest_dir();
    [m.join("csrc"), m.join("../../..")]
        .into_iter()
        .find(|d| d.join("libprof/shim.c").is_file() && d.join("include/d9prof.h").is_file())
}

/// A tool from the environment as cargo's `cc` crate reads it: `NAME_<target>`,
/// `NAME_<target_with_underscores>`, `TARGET_NAME`, `NAME`, else `default`.
fn tool(name: &str, default: &str) -> String {
    let target = env::var("TARGET").unwrap_or_default();
    let keys = [
        format!("{name}_{target}"),
        format!("{name}_{}", target.replace('-', "_")),
        format!("TARGET_{name}"),
        name.to_string(),
    ];
    for k in &keys {
        println!("cargo:rerun-if-env-changed={k}");
    }
    keys.iter()
        .find_map(|k| env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| default.to_string())
}

/// Compile `root/libprof/*.c` as the Makefile does (its BASE_CFLAGS, -O2,
/// PIC, hidden visibility) into `OUT_DIR/libd9prof.a` and link it.
fn build_shim(root: &Path) {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cc = tool("CC", "cc");
    let ar = tool("AR", "ar");
    let version = version(&root.join("include/d9prof.h"));
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(root.join("libprof"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    srcs.retain(|p| p.extension().is_some_and(|x| x == "c"));
    srcs.sort();
    println!("cargo:rerun-if-changed={}", root.join("libprof").display());
    println!("cargo:rerun-if-changed={}", root.join("include").display());

    let mut jobs = Vec::new();
    let mut objs = Vec::new();
    for src in &srcs {
        let obj = out.join(src.file_stem().unwrap()).with_extension("o");
        let child = Command::new(&cc)
            .args([
                "-std=gnu11",
                "-O2",
                "-g",
                "-fno-omit-frame-pointer",
                "-fPIC",
            ])
            .args(["-fvisibility=hidden", "-D_GNU_SOURCE", "-w"])
            .arg(format!("-DD9_VERSION=\"{version}\""))
            .arg("-I")
            .arg(root)
            .arg("-I")
            .arg(root.join("include"))
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                die(&format!(
                    "cannot run the C compiler '{cc}' ({e}): install one \
                     (apt-get install gcc) or set CC"
                ))
            });
        jobs.push((src, child));
        objs.push(obj);
    }
    for (src, child) in jobs {
        let r = child.wait_with_output();
        match r {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                let first = err.lines().find(|l| l.contains("error")).unwrap_or("");
                die(&format!(
                    "'{cc}' failed on {}: {first} (set D9PROF_LIB_DIR to a make-built shim instead)",
                    src.display()
                ))
            }
            Err(e) => die(&format!("'{cc}' on {}: {e}", src.display())),
        }
    }
    let lib = out.join("libd9prof.a");
    let _ = std::fs::remove_file(&lib);
    match Command::new(&ar).arg("rcs").arg(&lib).args(&objs).status() {
        Ok(s) if s.success() => {}
        Ok(s) => die(&format!("'{ar} rcs {}' failed ({s})", lib.display())),
        Err(e) => die(&format!(
            "cannot run '{ar}' ({e}): install binutils (apt-get install binutils) or set AR"
        )),
    }
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=d9prof");
}

/// MAJOR.MINOR.0 from d9prof.h, as the Makefile's VERSION.
fn version(header: &Path) -> String {
    let text = std::fs::read_to_string(header).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix("#define "))
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "0".into())
    };
    format!(
        "{}.{}.0",
        field("D9PROF_VERSION_MAJOR"),
        field("D9PROF_VERSION_MINOR")
    )
}

fn from_lib_dir(dir: &str, want_shared: bool) {
    let d = Path::new(dir);
    let has_so = d.join("libd9prof.so").exists();
    let has_a = d.join("libd9prof.a").exists();
    if !has_so && !has_a {
        die(&format!(
            "D9PROF_LIB_DIR={dir} has no libd9prof.so or libd9prof.a: \
             run make there, or unset it to build the shim from source"
        ));
    }
    // relink when the library is rebuilt (a static one is copied in)
    println!("cargo:rerun-if-changed={dir}/libd9prof.a");
    println!("cargo:rerun-if-changed={dir}/libd9prof.so");
    println!("cargo:rustc-link-search=native={dir}");
    if has_a && !want_shared {
        println!("cargo:rustc-link-lib=static=d9prof");
    } else {
        // a dependency's link args do not reach the program's link
        println!("cargo:rustc-link-lib=dylib=d9prof");
        println!(
            "cargo:warning=linked to {dir}/libd9prof.so: the program needs \
             -C link-arg=-Wl,-rpath,{dir} in its rustflags (or LD_LIBRARY_PATH={dir}) to run"
        );
    }
}

/// Links the installed libd9prof; Err(the reason) when pkg-config cannot
/// say where it is.
fn from_pkg_config(want_static: bool) -> Result<(), String> {
    let mut args = vec!["--libs"];
    if want_static {
        args.push("--static");
    }
    args.push("d9prof");
    let libs = match Command::new("pkg-config").args(&args).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            return Err("'pkg-config --libs d9prof' finds no installed libd9prof: \
                 make install, or set D9PROF_LIB_DIR to a d9prof build directory"
                .into())
        }
    };
    for tok in libs.split_whitespace() {
        if let Some(dir) = tok.strip_prefix("-L") {
            println!("cargo:rerun-if-changed={dir}/libd9prof.a");
            println!("cargo:rerun-if-changed={dir}/libd9prof.so");
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = tok.strip_prefix("-l") {
            if lib == "d9prof" && want_static {
                println!("cargo:rustc-link-lib=static=d9prof");
            } else {
                println!("cargo:rustc-link-lib={lib}");
            }
        }
    }
    Ok(())
}
