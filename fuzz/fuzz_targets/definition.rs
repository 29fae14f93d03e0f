//! cargo-fuzz target: arbitrary bytes as an agent definition file (Markdown with YAML
//! frontmatter), loaded through a scenario's `agents.NAME.file` the way `subsim tools
//! --definition` loads one. A panic is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("subsim-fuzz-definition-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() || std::fs::write(dir.join("agent.md"), data).is_err() {
        return;
    }
    let wrapper = "name: fuzz\nagents:\n  fuzzed: {file: agent.md}\nmain:\n  - spawn: {agent: fuzzed}\n";
    let _ = subsim_scenario::parse_scenario(wrapper, "wrapper.yaml", &dir);
});
