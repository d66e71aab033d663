//! One stable sort for the whole engine.
//!
//! Every `slice::sort_by` call compiles its own copy of the standard sort for
//! its element and comparator types; a dozen call sites cost the browser
//! build tens of kilobytes. Here the sort runs once, on indices, behind a
//! `dyn` comparator, and the slice is then permuted in place.

use std::cmp::Ordering;

/// The order that sorts `len` items by `compare` (stable: ties keep their order).
fn sorted_order(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|a, b| compare(*a, *b));
    order
}

/// Puts `items[order[i]]` at `i`, by swaps.
fn permute<T>(items: &mut [T], order: &[usize]) {
    for target in 0..items.len() {
        // Where the wanted item is now: earlier swaps may have moved it.
        let mut source = order[target];
        while source < target {
            source = order[source];
        }
        items.swap(target, source);
    }
}

pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let order = sorted_order(items.len(), &|a, b| compare(&items[a], &items[b]));
    permute(items, &order);
}

pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn agrees_with_the_standard_stable_sort() {
        let mut rng = Rng::new(3);
        for len in 0..60 {
            let items: Vec<(u8, usize)> = (0..len).map(|at| (rng.range_u64(0, 5) as u8, at)).collect();
            let mut ours = items.clone();
            sort_by_key(&mut ours, |item| item.0);
            let mut standard = items.clone();
            standard.sort_by_key(|item| item.0);
            assert_eq!(ours, standard, "len {len}");
        }
        let mut words = vec!["b", "a", "c", "a"];
        sort(&mut words);
        assert_eq!(words, ["a", "a", "b", "c"]);
    }
}
