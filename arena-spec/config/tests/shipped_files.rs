//! The shipped vendor files are the bytes their sources list.

use arena_config::models::SHIPPED;

/// The shipped vendor files are the bytes `models/SOURCES.md` lists (size and SHA-256), and
/// every non-synthetic file is listed: nobody edits a vendor's file by accident.
#[test]
fn shipped_files_are_the_bytes_listed_in_sources() {
    use sha2::{Digest, Sha256};
    let root = env!("CARGO_MANIFEST_DIR");
    let sources = std::fs::read_to_string(format!("{root}/models/SOURCES.md")).unwrap();
    let mut listed = std::collections::BTreeMap::new();
    for line in sources.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let file = cells[0].trim_start_matches("| `").trim_end_matches('`');
        let bytes: usize = cells[5].parse().unwrap();
        let sha = cells[6].trim_matches('`').to_string();
        listed.insert(file.to_string(), (bytes, sha));
    }
    let check = |dir: &str, file: &str| {
        let data = std::fs::read(format!("{root}/{dir}/{file}")).unwrap();
        let (bytes, sha) = listed
            .get(file)
            .unwrap_or_else(|| panic!("{file} is not listed in models/SOURCES.md"));
        assert_eq!(data.len(), *bytes, "{file}: size");
        let digest: String = Sha256::digest(&data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(&digest, sha, "{file}: SHA-256");
    };
    for m in SHIPPED.iter().filter(|m| !m.is_synthetic()) {
        check("models", &format!("{}.json", m.name));
        assert_eq!(
            std::fs::read_to_string(format!("{root}/models/{}.json", m.name)).unwrap(),
            m.json,
            "the embedded text is the file"
        );
    }
    let on_disk = std::fs::read_dir(format!("{root}/models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") && !n.starts_with("synthetic"))
        .count();
    assert_eq!(
        on_disk,
        SHIPPED.iter().filter(|m| !m.is_synthetic()).count(),
        "every file is shipped"
    );
}
