//! arena-spec's host tests, one binary (each file a module, named as it was): the arena's
//! sizes against the seeds, the oracle and the golden tables; configs, families and recipes;
//! the KV pool, state cache, weights and whole-GPU plan; parallel layouts. One binary links
//! once where twenty-one linked apiece. Run one file's tests by its name:
//! `cargo test -p arena-spec --test host kv_pool::`.

mod shipped;
mod vllm_pages;

mod any_config;
mod census;
mod checkpoint_files;
mod checkpoint_fixtures;
mod checkpoint_formats;
mod checkpoint_ranks;
mod const_sizes;
mod dependencies;
mod family_files;
mod family_rules;
mod family_table;
mod golden_sizes;
mod gpu_plan_host;
mod host_allocation;
mod hostile_configs;
mod house;
mod kv_pool;
mod kv_sweep;
mod kv_windows;
mod nemotron_nas;
mod oracle;
mod oracle_buffers;
mod oracle_widths;
mod parallel;
mod phases;
mod properties;
mod quant_recipes;
mod scratch_by_format;
mod serving;
mod shipped_models;
mod state_cache;
mod towers;
mod weights;
