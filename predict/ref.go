package predict

import "github.com/finegrain/finegrain/stage"

// Ref is a reference to what a SimilarTask keeps for one key, for a caller that asks
// for the same key's estimate again and again — a scheduler, for each class of
// pending tasks at every heartbeat. Ref.Estimate answers exactly as
// SimilarTask.Estimate does for the key, and counts as the same use of the key for
// eviction, but looks the key up only while the estimator has no entry for it (the
// key is not observed yet, or was evicted or forgotten since): otherwise it reads the
// entry it holds, with two atomic loads instead of hashing the key; and while the key
// has no entry, it looks again only after the estimator inserted some key.
//
// The zero Ref refers to nothing: its Estimate is false. A Ref is a small value and
// holds no lock; it may be copied, but one Ref (one copy) must not be used
// concurrently, as Estimate refreshes what it holds. The SimilarTask it refers to
// stays safe for concurrent use.
type Ref struct {
	s      *SimilarTask
	key    Key    // canonical
	fam    Key    // the family's key in s.fam; zero: none
	e      *entry // key's entry when last looked up; nil: none
	looked bool   // e was looked up
	seen   uint64 // SimilarTask.inserts before that lookup
}

// Ref returns a reference to k's key (its bucket, with WithSizeBuckets), and its
// family (Key.Family). A reference to an invalid key is unpredictable, as the key is
// to Estimate.
func (s *SimilarTask) Ref(k Key) Ref {
	if k.validate() != nil {
		return Ref{}
	}
	fk, _ := s.familyKey(k)
	return Ref{s: s, key: s.canon(k), fam: fk}
}

// Estimate is SimilarTask.Estimate for the key r refers to; false for the zero Ref
// (and a nil one).
func (r *Ref) Estimate() (stage.Profile, bool) {
	if r == nil || r.s == nil {
		return stage.Profile{}, false
	}
	if r.e != nil && r.e.gone.Load() {
		r.e, r.looked = nil, false
	}
	if r.e == nil {
		// A key without an entry has none until the estimator inserts one: look
		// it up again only once it has inserted any since the last look.
		if n := r.s.inserts.Load(); !r.looked || n != r.seen {
			r.e, r.looked, r.seen = r.s.load(r.key), true, n
		}
	}
	if p, ok := r.s.own(r.e); ok {
		return p, true
	}
	return r.s.fallback(r.key, r.e, r.fam)
}

// Key is the canonical key r refers to: the key it was made for without its Family,
// with its input size mapped to its bucket's (WithSizeBuckets). The zero Ref's (and a
// nil one's) is the zero Key.
func (r *Ref) Key() Key {
	if r == nil {
		return Key{}
	}
	return r.key
}
