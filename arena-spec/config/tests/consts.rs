//! The shipped models' `const` configs (`src/models/consts.rs`) are the loaded ones: written
//! by `ModelConfig::const_item` from each file, and checked current here.

use arena_config::models::SHIPPED;
use arena_config::Levers;

/// The text of `src/models/consts.rs`: every shipped config written back as a `const`.
fn shipped_consts_source() -> String {
    let mut out = String::from(
        "//! Generated from `arena-spec/config/models/*.json` by `ModelConfig::const_item`: do not edit.\n\
         //! Every shipped model as a `const ModelConfig` (levers off), for the const sizing path.\n\
         //! `ARENA_BLESS=1 cargo test -p arena-config --test consts` rewrites it; that test\n\
         //! fails while it is stale.\n\n\
         use crate::config::levers::Levers;\n\
         use crate::config::{Block, Family, KvLayer, LayerKind, ModelConfig, Resolution, TextModel};\n\
         use crate::config::{FormatSource, WeightFormat, WeightFormats};\n\
         use crate::config::{RecurrentStateDtype, StateDtype, StateDtypeSource};\n\
         use crate::config::{Tower, TowerKind, Towers};\n\
         use std::borrow::Cow;\n",
    );
    let mut all = String::new();
    for m in SHIPPED {
        let config = m.config_with_levers(Levers::default()).unwrap();
        let name = arena_config::const_name(m.name);
        out.push('\n');
        out.push_str(&config.const_item(&name).unwrap());
        all.push_str(&format!("    ({:?}, &{name}),\n", m.name));
    }
    out.push_str(&format!(
        "\n/// Each shipped model's name and const config, in `SHIPPED` order.\n\
         pub const ALL: &[(&str, &ModelConfig)] = &[\n{all}];\n"
    ));
    out
}

#[test]
fn the_shipped_consts_are_the_loaded_configs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/models/consts.rs");
    let expected = shipped_consts_source();
    if std::env::var_os("ARENA_BLESS").is_some() {
        std::fs::write(path, &expected).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        expected,
        "src/models/consts.rs is stale: re-bless with ARENA_BLESS=1"
    );
    let consts = arena_config::models::consts::ALL;
    assert_eq!(consts.len(), SHIPPED.len());
    for ((name, config), m) in consts.iter().zip(SHIPPED) {
        assert_eq!(*name, m.name);
        assert_eq!(
            **config,
            m.config_with_levers(Levers::default()).unwrap(),
            "{name}"
        );
    }
}
