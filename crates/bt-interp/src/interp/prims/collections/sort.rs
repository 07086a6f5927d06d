//! A stable merge sort whose comparator may fail (a `sort:` block can raise) or be
//! inconsistent (a user block need not be a total order): it never panics, it just produces
//! some permutation. The comparator answers "a may precede b".

/// Sorts `items` stably by `le` ("may `a` precede `b`"); the first error stops the sort.
pub(crate) fn merge_sort<T, E>(
    items: Vec<T>,
    mut le: impl FnMut(&T, &T) -> Result<bool, E>,
) -> Result<Vec<T>, E> {
    let n = items.len();
    if n < 2 {
        return Ok(items);
    }
    let mut src: Vec<usize> = (0..n).collect();
    // Insertion-sort runs of 8 first (fewer passes, same stability).
    const RUN: usize = 8;
    for start in (0..n).step_by(RUN) {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let mut j = i;
            while j > start && !le(&items[src[j - 1]], &items[src[j]])? {
                src.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    let mut dst: Vec<usize> = vec![0; n];
    let mut width = RUN;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                if le(&items[src[i]], &items[src[j]])? {
                    dst[k] = src[i];
                    i += 1;
                } else {
                    dst[k] = src[j];
                    j += 1;
                }
                k += 1;
            }
            dst[k..k + (mid - i)].copy_from_slice(&src[i..mid]);
            k += mid - i;
            dst[k..k + (hi - j)].copy_from_slice(&src[j..hi]);
            lo = hi;
        }
        std::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    Ok(src.into_iter().filter_map(|i| slots[i].take()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(v: Vec<i32>) -> Vec<i32> {
        merge_sort(v, |a, b| Ok::<_, ()>(a <= b)).unwrap()
    }

    #[test]
    fn sorts() {
        assert_eq!(sorted(vec![]), Vec::<i32>::new());
        assert_eq!(sorted(vec![1]), vec![1]);
        assert_eq!(sorted(vec![3, 1, 2]), vec![1, 2, 3]);
        let v: Vec<i32> = (0..1000).map(|i| (i * 7919) % 1000).collect();
        let mut expect = v.clone();
        expect.sort();
        assert_eq!(sorted(v), expect);
    }

    #[test]
    fn stable() {
        let v: Vec<(i32, usize)> = (0..100).map(|i| ((i % 3) as i32, i)).collect();
        let s = merge_sort(v, |a, b| Ok::<_, ()>(a.0 <= b.0)).unwrap();
        for w in s.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1));
        }
    }

    #[test]
    fn inconsistent_comparator_is_a_permutation() {
        let v: Vec<i32> = (0..100).collect();
        let mut s = merge_sort(v, |_, _| Ok::<_, ()>(false)).unwrap();
        s.sort();
        assert_eq!(s, (0..100).collect::<Vec<_>>());
        let mut flip = false;
        let mut s = merge_sort((0..57).collect::<Vec<i32>>(), |_, _| {
            flip = !flip;
            Ok::<_, ()>(flip)
        })
        .unwrap();
        s.sort();
        assert_eq!(s, (0..57).collect::<Vec<_>>());
    }

    #[test]
    fn error_stops() {
        let r = merge_sort(
            vec![3, 2, 1],
            |a, _| if *a == 2 { Err("boom") } else { Ok(true) },
        );
        assert_eq!(r, Err("boom"));
    }
}
