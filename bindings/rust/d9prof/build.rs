//! Links libd9prof: from D9PROF_LIB_DIR (static when D9PROF_STATIC=1 or
//! when only libd9prof.a is there), else through pkg-config's d9prof.pc
//! (`make install` writes it).
use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=D9PROF_LIB_DIR");
    println!("cargo:rerun-if-env-changed=D9PROF_STATIC");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let want_static = env::var("D9PROF_STATIC").map(|v| v == "1").unwrap_or(false);

    if let Ok(dir) = env::var("D9PROF_LIB_DIR") {
        let d = Path::new(&dir);
        let has_so = d.join("libd9prof.so").exists();
        let has_a = d.join("libd9prof.a").exists();
        if !has_so && !has_a {
            panic!("D9PROF_LIB_DIR={dir}: no libd9prof.so or libd9prof.a there (run make)");
        }
        // relink when the library is rebuilt (a static one is copied in)
        println!("cargo:rerun-if-changed={dir}/libd9prof.a");
        println!("cargo:rerun-if-changed={dir}/libd9prof.so");
        println!("cargo:rustc-link-search=native={dir}");
        if want_static || !has_so {
            println!("cargo:rustc-link-lib=static=d9prof");
        } else {
            println!("cargo:rustc-link-lib=dylib=d9prof");
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
        return;
    }
    let mut args = vec!["--libs"];
    if want_static {
        args.push("--static");
    }
    args.push("d9prof");
    let out = Command::new("pkg-config").args(&args).output();
    let libs = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => panic!(
            "cannot find libd9prof: set D9PROF_LIB_DIR to the directory holding \
             libd9prof.{{so,a}}, or install it (make install) so that \
             'pkg-config --libs d9prof' works"
        ),
    };
    for tok in libs.split_whitespace() {
        if let Some(dir) = tok.strip_prefix("-L") {
            // relink when the library is rebuilt (a static one is copied in)
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
}
