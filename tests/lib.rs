//! Arenas the integration tests share. Each is also an expansion-snapshot input
//! (`expand/*.rs`), so the snapshot's source is code that compiles.

pub mod example {
    include!("expand/example.rs");
}

pub mod scratch {
    include!("expand/scratch.rs");
}

pub mod phased {
    include!("expand/phased.rs");
}
