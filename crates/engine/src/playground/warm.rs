//! Warm-up: bronze read with its declared schema into the parse cache
//! while the engine is idle. A saved session opens with its tables read
//! from the lake but nothing parsed, so without it the first rule edit
//! after a reload reads every payload first (336,776 for the flights:
//! seconds in the browser, where a later edit takes a fraction of one).

use super::*;

impl Playground {
    /// Reads each bronze table's live batches with its declared schema
    /// into the parse cache ([`crate::silver::parse_cache`]), as the next
    /// run would, unless it holds them already. Returns how many bronze
    /// records were read (0: the cache was warm). A table that cannot be
    /// read is left out: the next run reads it again and reports why.
    pub fn warm_up(&self) -> usize {
        let mut read = 0;
        for b in &self.def.bronze {
            let all = self.bronze.get(&b.name).map(Vec::as_slice).unwrap_or(&[]);
            let batches = crate::pipeline::live_batches(all);
            if batches.is_empty() || self.parse_cache.holds(&b.name, &b.schema, &batches) {
                continue;
            }
            if self.parse_cache.parse(&b.name, &b.schema, &batches).is_ok() {
                read += batches.iter().map(|(_, rb)| rb.num_rows()).sum::<usize>();
            }
        }
        read
    }
}
