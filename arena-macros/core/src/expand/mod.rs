//! Code generation, one module per generator (the layout of zerocopy-derive's `derive/`):
//! [`arena`] for `#[derive(Arena)]`, which adds the const sizing path of [`const_path`] when
//! asked and the view sets of [`views`]; [`regions`] for `#[derive(Regions)]`. What more than one of them uses is in
//! [`parts`]; [`items`] renders a generator's item list as the real expansion or the
//! fallback. The imports go one way: `parts` and `items` import no generator, `const_path`
//! and `regions` import no other generator, and only `arena` imports `const_path` and `views`.

mod arena;
mod const_path;
mod items;
mod parts;
mod regions;
mod views;

pub use arena::derive as derive_arena;
pub use regions::derive as derive_regions;
