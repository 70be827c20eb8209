package predict

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Checkpointer is an Estimator whose learned state can be saved and restored: what a
// scheduler needs to keep what it learned across a restart, or to hand it to the
// replica that takes over on failover. It is the seam for other estimators: the
// reference scheduler saves and restores whatever estimator it is given that
// implements it (finegrain.Scheduler.SaveEstimates and RestoreEstimates). SimilarTask
// is one.
//
// An implementation writes a self-describing, versioned encoding, and Restore refuses
// — with an error wrapping ErrCheckpoint, changing nothing — anything it did not write
// or cannot hold: another format, a version it does not read, another schema, or a
// state its options could not have reached. Both are safe for concurrent use with the
// estimator's other methods.
type Checkpointer interface {
	// Checkpoint writes everything the estimator has learned to w. It fails only when
	// w does.
	Checkpoint(w io.Writer) error
	// Restore replaces everything the estimator has learned by what r holds, written
	// by Checkpoint. On error nothing changes.
	Restore(r io.Reader) error
}

var _ Checkpointer = (*SimilarTask)(nil)

// The format SimilarTask.Checkpoint writes: its name and version, the document's
// "format" and "version" members.
const (
	// CheckpointFormat names the encoding of SimilarTask's learned state.
	CheckpointFormat = "finegrain/predict.SimilarTask"
	// CheckpointVersion is the version of CheckpointFormat that Checkpoint writes,
	// and the newest that Restore reads.
	CheckpointVersion = 1
)

// The checkpoint document, version 1: its members are the JSON names of ckHeader's
// fields, then "keys" and "families" (the family estimator's, when it learns
// families), lists of ckEntry. See Checkpoint.
type (
	// ckDoc is a document as decodeCheckpoint read it, member by member.
	ckDoc struct {
		Format   string
		Version  int
		Schema   []ckDim
		Options  ckOptions
		Keys     []ckEntry
		Families []ckEntry
	}
	ckDim struct {
		Name                 string `json:"name"`
		Unit                 string `json:"unit"`
		Compressible         bool   `json:"compressible"`
		BaseUnitsPerQuantity int64  `json:"baseUnitsPerQuantity"`
		BinarySI             bool   `json:"binarySI"`
	}
	ckOptions struct {
		History        int  `json:"history"`
		HistoryBuckets int  `json:"historyBuckets"`
		SizeBuckets    bool `json:"sizeBuckets"`
		Family         bool `json:"family"`
	}
	ckEntry struct {
		Logic        string     `json:"logic,omitempty"`
		LogicBytes   []byte     `json:"logicBytes,omitempty"`
		Size         int64      `json:"size"`
		Recency      int        `json:"recency"`
		Observations int        `json:"observations"`
		RunningSpan  int64      `json:"runningSpan,omitempty"`
		Estimate     []ckStage  `json:"estimate"`
		Learned      *ckLearned `json:"learned,omitempty"`
		History      []ckObs    `json:"history,omitempty"`
		Redivide     bool       `json:"redivide,omitempty"`
	}
	ckStage struct {
		Duration int64   `json:"duration"`
		Demand   []int64 `json:"demand"`
	}
	ckLearned struct {
		Durations []float64   `json:"durations"`
		Demands   [][]float64 `json:"demands"`
	}
	ckObs struct {
		Stages      int     `json:"stages"`
		Compression float64 `json:"compression"`
		Buckets     []ckRun `json:"buckets"`
	}
	ckRun struct {
		Count       int     `json:"count"`
		Peak        []int64 `json:"peak"`
		Compression float32 `json:"compression,omitempty"`
	}
)

// ckHeader is the start of the document: its format's name and version, its schema
// and the options that shape its state.
type ckHeader struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Schema  []ckDim   `json:"schema"`
	Options ckOptions `json:"options"`
}

// Checkpoint implements Checkpointer: it writes to w everything the estimator has
// learned, in a versioned JSON document that Restore reads back into an estimator of
// the same schema and options — one that then estimates, learns, re-divides and evicts
// exactly as this one would have. It records, for every key held:
//
//   - the canonical key (Logic, and InputSize mapped to its size bucket);
//   - the estimate readers see (its stages' durations in nanoseconds and demands in
//     the schema's base units, as integers), and how many observations it has had;
//   - the iterative update's exact state behind the estimate (per-stage durations and
//     demands, kept in floating point: written as the shortest decimals that read back
//     to the same float64, so nothing is rounded);
//   - its history (WithHistory), oldest observation first, each with its number of
//     stages, its largest compression and its buckets' peaks and compressions (a run
//     of equal buckets written once, with its count), and whether the key awaits
//     re-division (Redivide);
//   - for a key known only from a running task's report (ObserveRunning), the report's
//     span and the open-ended estimate made from it;
//   - its rank in the least-recently-used order (1 for the least recently used), so
//     that eviction after Restore picks the keys it would have picked.
//
// With WithFamily, it records the families' size classes likewise ("families": their
// Logic is the family's name, their InputSize the class's canonical size). It also
// records the schema and the options that shape that state: WithHistory's sizes,
// whether WithSizeBuckets is set, and whether families are learned (Restore checks
// them). The other options — base weight, minimum observations, nearest size, size
// scaler, resample, segmenter, envelope, running span, family factor, key cap — say
// how the state is used and updated, not what it holds: they are not recorded, and the
// restored state is used under the restoring estimator's (the key cap bounds how many
// keys it accepts).
//
// The encoding is deterministic: keys sorted by Logic (byte-wise) then InputSize, the
// document's members in a fixed order, one key a line, so that the same state always
// writes the same bytes. A Logic that is not valid UTF-8 is written as "logicBytes",
// in base64, so that every key round-trips exactly. A version 1 checkpoint of one key
// (the schema cut short; the families' classes are written as the keys are) reads:
//
//	{"format":"finegrain/predict.SimilarTask","version":1,"schema":[{"name":"cpu","unit":"millicore","compressible":true,"baseUnitsPerQuantity":1000,"binarySI":false},…],"options":{"history":2,"historyBuckets":4,"sizeBuckets":false,"family":true},"keys":[
//	{"logic":"etl/map","size":100,"recency":1,"observations":2,"estimate":[{"duration":11500000000,"demand":[1150,100]}],"learned":{"durations":[11500000000],"demands":[[1150,92.5]]},"history":[{"stages":1,"compression":0,"buckets":[{"count":4,"peak":[1000,100]}]},{"stages":1,"compression":0.5,"buckets":[{"count":4,"peak":[2000,50],"compression":0.5}]}],"redivide":true}
//	],"families":[…]}
//
// Stability: this is version 1 of the format, and a version 1 document holds the
// members shown here and no others. A later version of this package reads version 1
// checkpoints, or refuses them with an error wrapping ErrCheckpoint that says it
// cannot; Checkpoint writes the newest version its package knows, which an older
// package refuses the same way (naming the version), never misreads.
//
// Checkpoint is consistent under concurrent calls: it copies the state holding the
// estimator's lock for reading, which excludes every writer (no Observe,
// ObserveRunning, Redivide or Forget is half applied; Estimate goes on), then encodes
// and writes after releasing it. Two things are not atomic with it: an Observe of a
// key that names a family teaches the key then the family, so a checkpoint taken
// between the two holds the key's lesson without the family's; and the use order is
// copied as it stands while Estimate goes on moving it. Checkpoint changes nothing;
// it fails only when w does (or w is nil).
func (s *SimilarTask) Checkpoint(w io.Writer) error {
	if w == nil {
		return fieldErr("checkpoint writer", "nil", ErrInvalidValue)
	}
	keys, fams := s.copyState()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	h := ckHeader{Format: CheckpointFormat, Version: CheckpointVersion, Options: s.ckOptions()}
	for _, d := range s.schema.Dims() {
		h.Schema = append(h.Schema, ckDim{Name: d.Name, Unit: d.Unit, Compressible: d.Compressible,
			BaseUnitsPerQuantity: d.BaseUnitsPerQuantity, BinarySI: d.BinarySI})
	}
	if err := enc.Encode(h); err != nil {
		return wrapf(err, "checkpoint")
	}
	buf.Truncate(buf.Len() - 2) // "}\n": the lists follow
	if err := writeList(&buf, enc, "keys", keys); err != nil {
		return err
	}
	if s.fam != nil {
		if err := writeList(&buf, enc, "families", fams); err != nil {
			return err
		}
	}
	buf.WriteString("}\n")
	if _, err := w.Write(buf.Bytes()); err != nil {
		return wrapf(err, "checkpoint: writing")
	}
	return nil
}

// writeList appends ,"name":[ and the entries, one a line, then ].
func writeList(buf *bytes.Buffer, enc *json.Encoder, name string, entries []ckEntry) error {
	buf.WriteString(`,"` + name + `":[`)
	for i := range entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
		if err := enc.Encode(&entries[i]); err != nil {
			return wrapf(err, "checkpoint: %s[%d]", name, i)
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	if len(entries) > 0 {
		buf.WriteByte('\n')
	}
	buf.WriteByte(']')
	return nil
}

// ckOptions are the options that shape the estimator's state, as recorded.
func (s *SimilarTask) ckOptions() ckOptions {
	o := ckOptions{History: s.cfg.history, SizeBuckets: s.cfg.bucket != nil, Family: s.fam != nil}
	if o.History > 0 {
		o.HistoryBuckets = s.cfg.buckets
	}
	return o
}

// copyState copies the keys' and the families' state, each in key order with its
// recency rank. It holds s.mu, then the family estimator's lock, for reading: no
// writer runs meanwhile.
func (s *SimilarTask) copyState() (keys, fams []ckEntry) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys = s.copyLocked()
	if s.fam != nil {
		s.fam.mu.RLock()
		defer s.fam.mu.RUnlock()
		fams = s.fam.copyLocked()
	}
	return keys, fams
}

// copyLocked is the state of every entry, in key order with its recency rank. The
// caller holds s.mu.
func (s *SimilarTask) copyLocked() []ckEntry {
	type item struct {
		key  Key
		used uint64
		c    ckEntry
	}
	items := make([]item, len(s.lru))
	for i, e := range s.lru {
		items[i] = item{key: e.key, used: e.used.Load(), c: s.copyEntry(e)}
	}
	byKey := func(a, b item) int {
		if c := strings.Compare(a.key.Logic, b.key.Logic); c != 0 {
			return c
		}
		return cmp.Compare(a.key.InputSize, b.key.InputSize)
	}
	// Uses are ticks of one clock, so no two entries share one; the key breaks a tie
	// all the same, so that the ranks never depend on the heap's order.
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.used, b.used); c != 0 {
			return c
		}
		return byKey(a, b)
	})
	for i := range items {
		items[i].c.Recency = i + 1
	}
	slices.SortFunc(items, byKey)
	out := make([]ckEntry, len(items))
	for i := range items {
		out[i] = items[i].c
	}
	return out
}

// copyEntry is e's state as the checkpoint records it, without its recency. The
// caller holds s.mu.
func (s *SimilarTask) copyEntry(e *entry) ckEntry {
	dims := s.schema.Len()
	sn := e.snap.Load()
	c := ckEntry{Size: e.key.InputSize, Observations: sn.n}
	if utf8.ValidString(e.key.Logic) {
		c.Logic = e.key.Logic
	} else {
		c.LogicBytes = []byte(e.key.Logic)
	}
	c.Estimate = make([]ckStage, sn.profile.Len())
	for i := range c.Estimate {
		st := sn.profile.Stage(i)
		c.Estimate[i] = ckStage{Duration: int64(st.Duration), Demand: slices.Clone(st.Demand[:dims])}
	}
	if e.dur == nil { // a running task's report
		c.RunningSpan = int64(e.span)
		return c
	}
	c.Learned = &ckLearned{Durations: slices.Clone(e.dur), Demands: make([][]float64, len(e.dem))}
	for i, v := range e.dem {
		c.Learned.Demands[i] = slices.Clone(v[:dims])
	}
	if h := e.hist; h != nil {
		c.History = h.copyObs()
	}
	c.Redivide = e.dirty
	return c
}

// copyObs is the history's observations as the checkpoint records them, oldest first,
// consecutive buckets of equal peaks and compression written as one run.
func (h *history) copyObs() []ckObs {
	out := make([]ckObs, h.n)
	for i := range out {
		slot := h.slot(i)
		o := ckObs{Stages: int(h.count[slot]), Compression: h.rcObs[slot]}
		for j := 0; j < h.b; j++ {
			at := (slot*h.b + j) * h.dims
			cell, rc := h.peak[at:at+h.dims], h.rc[slot*h.b+j]
			if n := len(o.Buckets); n > 0 && o.Buckets[n-1].Compression == rc && slices.Equal(o.Buckets[n-1].Peak, cell) {
				o.Buckets[n-1].Count++
				continue
			}
			o.Buckets = append(o.Buckets, ckRun{Count: 1, Peak: slices.Clone(cell), Compression: rc})
		}
		out[i] = o
	}
	return out
}

// Restore implements Checkpointer: it replaces everything the estimator has learned —
// every key, its estimate, history and place in the use order, and the families' —
// by what the checkpoint r holds (see Checkpoint), which it reads to its end. Keys
// the estimator held that the checkpoint does not are forgotten; a Ref to any key
// looks it up again.
//
// It refuses, with an error wrapping ErrCheckpoint that names the member at fault and
// says what is wrong, and changes nothing:
//
//   - input that is empty, truncated, not JSON, followed by more data, or with
//     members the format does not define or of the wrong type;
//   - another format, or a version other than 1 (the message says which);
//   - a checkpoint of another schema — other dimensions, names, units,
//     compressibility or text scales (the error also wraps resource.ErrSchemaMismatch);
//   - a checkpoint made under options that shape the state differently: another
//     WithHistory (observations and buckets), WithSizeBuckets set in one and not the
//     other, family learning (WithFamily) on in one and off in the other; a key whose
//     size is not its own bucket's under the estimator's WithSizeBuckets (a family's
//     class under WithFamilyBuckets); more keys (or families' classes) than
//     WithMaxKeys allows — the message names the option;
//   - a state the estimator could not have reached: a negative, NaN or infinite
//     amount or duration (or one beyond the int64 range), an empty Logic or negative
//     size, duplicate keys, stage counts that disagree between the estimate and its
//     state or exceed stage.MaxStages, recency ranks that are not a permutation, a
//     history that breaks its invariants (as many observations as the key has had, up
//     to WithHistory's; every bucket covered once; compressions in [0, 1]), a running
//     task's report that is not open-ended, or one among the families.
//
// What Restore allocates is in proportion to the input's length, never to a size the
// input claims: it reads the keys one at a time (never the whole input at once), and
// a history restored holds only the observations written — each the buckets ×
// dimensions peaks of WithHistory, however few runs it was written in — taking its
// full size when next added to. A reader's error is returned wrapped beside
// ErrCheckpoint.
//
// Restore reads and checks the whole checkpoint and builds the new state aside, then
// swaps it in holding the writers' lock (the keys', then the families'): a failed
// Restore has touched nothing, and Observe, Redivide and Forget see the state before
// or after. Estimate takes no lock: one running meanwhile sees each key as it was or
// as restored, and, keys being swapped one at a time, may see some keys restored and
// others not yet.
func (s *SimilarTask) Restore(r io.Reader) error {
	if r == nil {
		return fieldErr("checkpoint reader", "nil", ErrInvalidValue)
	}
	doc, err := decodeCheckpoint(r)
	if err != nil {
		return err
	}
	if err := s.compatible(doc); err != nil {
		return err
	}
	keys, err := s.rebuild("keys", doc.Keys, "WithSizeBuckets")
	if err != nil {
		return err
	}
	var fams *restored
	if s.fam != nil {
		if fams, err = s.fam.rebuild("families", doc.Families, "WithFamilyBuckets"); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installLocked(keys)
	if s.fam != nil {
		s.fam.mu.Lock()
		defer s.fam.mu.Unlock()
		s.fam.installLocked(fams)
	}
	return nil
}

// ckErr is Restore's refusal of the checkpoint's member name, of value value: why it
// is wrong, wrapping ErrCheckpoint (and also, when not nil, a sentinel saying more).
func ckErr(name string, value any, also error, format string, args ...any) error {
	why := fmt.Sprintf(format, args...)
	err := fmt.Errorf("%w: %s", ErrCheckpoint, why)
	if also != nil {
		err = fmt.Errorf("%w: %w: %s", ErrCheckpoint, also, why)
	}
	return fieldErr("checkpoint "+name, value, err)
}

// docErr is Restore's refusal of the document as a whole.
func docErr(format string, args ...any) error {
	return fmt.Errorf("predict: checkpoint: %w: %s", ErrCheckpoint, fmt.Sprintf(format, args...))
}

// decodeCheckpoint reads a version 1 document from r, strictly: no member the format
// does not define, none twice, nothing after the document. It decodes the lists of keys
// one entry at a time, so that what it holds beside the decoded entries is one entry's
// text; the format and version are checked as soon as they are read, so that a
// document of another format or version is refused as such, whatever it holds after
// them.
func decodeCheckpoint(r io.Reader) (*ckDoc, error) {
	in := &readErr{r: r}
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	fail := func(err error) (*ckDoc, error) {
		if in.err != nil {
			return nil, fmt.Errorf("predict: checkpoint: reading: %w: %w", ErrCheckpoint, in.err)
		}
		return nil, malformed(err)
	}
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return fail(errEmpty)
	case err != nil:
		return fail(err)
	case tok != json.Delim('{'):
		return fail(&json.UnmarshalTypeError{Value: jsonTokenKind(tok), Type: reflect.TypeFor[ckDoc](), Offset: dec.InputOffset()})
	}
	var doc ckDoc
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		name, _ := tok.(string) // a member's name: the decoder allows nothing else here
		if seen[name] {
			return nil, docErr("member %q twice", name)
		}
		seen[name] = true
		switch name {
		case "format":
			if err := dec.Decode(&doc.Format); err != nil {
				return fail(err)
			}
			if doc.Format != CheckpointFormat {
				return nil, ckErr("format", doc.Format, nil, "not a checkpoint of %s", CheckpointFormat)
			}
		case "version":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return fail(err)
			}
			if string(v) != "1" {
				return nil, ckErr("version", string(v), nil, "this package reads version %d only", CheckpointVersion)
			}
			doc.Version = 1
		case "schema":
			err = dec.Decode(&doc.Schema)
		case "options":
			err = dec.Decode(&doc.Options)
		case "keys":
			doc.Keys, err = decodeList(dec, name)
		case "families":
			doc.Families, err = decodeList(dec, name)
		default:
			return nil, docErr("unknown member %q of a version %d document", name, CheckpointVersion)
		}
		if err != nil {
			return fail(err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fail(err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		if in.err != nil {
			return fail(err)
		}
		return nil, docErr("trailing data after the document, which ends at byte %d", end)
	}
	switch {
	case doc.Format == "":
		return nil, ckErr("format", "", nil, "missing: not a checkpoint of %s", CheckpointFormat)
	case doc.Version == 0:
		return nil, ckErr("version", "", nil, "missing")
	}
	return &doc, nil
}

// errEmpty is the error decodeCheckpoint reports for empty input.
var errEmpty = errors.New("empty input")

// decodeList decodes the JSON array of entries named name (null: none), one entry at
// a time; an entry's error is a *listErr.
func decodeList(dec *json.Decoder, name string) ([]ckEntry, error) {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, err
	case tok == nil:
		return nil, nil
	case tok != json.Delim('['):
		return nil, &json.UnmarshalTypeError{Value: jsonTokenKind(tok), Type: reflect.TypeFor[[]ckEntry](), Offset: dec.InputOffset(), Field: name}
	}
	var out []ckEntry
	for dec.More() {
		at := dec.InputOffset()
		out = append(out, ckEntry{})
		if err := dec.Decode(&out[len(out)-1]); err != nil {
			return nil, &listErr{name: fmt.Sprintf("%s[%d]", name, len(out)-1), at: at, err: err}
		}
	}
	_, err = dec.Token() // the closing bracket
	return out, err
}

// listErr is the error decoding the entry name, which starts after byte at.
type listErr struct {
	name string
	at   int64
	err  error
}

func (e *listErr) Error() string { return e.name + ": " + e.err.Error() }
func (e *listErr) Unwrap() error { return e.err }

// jsonTokenKind names the kind of JSON value tok starts, as json.UnmarshalTypeError
// does.
func jsonTokenKind(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "number"
}

// readErr is a reader that keeps the error its reader failed with, other than io.EOF:
// the decoder reports it as it stands, and Restore must tell it from bad input.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// malformed describes a JSON decoding error.
func malformed(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var in *listErr
	where, at := "", int64(0) // the entry at fault, and where it starts
	if errors.As(err, &in) {
		where, at = in.name, in.at
	}
	switch {
	case errors.Is(err, errEmpty):
		return docErr("empty input")
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return docErr("truncated: the input ends inside the document")
	case errors.As(err, &syn):
		return docErr("malformed JSON at byte %d: %v", at+syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		switch {
		case where != "" && field != "":
			field = where + "." + field
		case where != "":
			field = where
		case field == "":
			field = "the document"
		}
		if k := typ.Type.Kind(); k == reflect.Float32 || k == reflect.Float64 {
			return docErr("%s, at byte %d, is a JSON %s, beyond the range of a %v", field, at+typ.Offset, typ.Value, typ.Type)
		}
		return docErr("%s, at byte %d, is a JSON %s where the format has %s", field, at+typ.Offset, typ.Value, jsonKind(typ.Type))
	}
	msg := err.Error()
	if in != nil {
		msg = in.err.Error()
	}
	msg = strings.TrimPrefix(msg, "json: ")
	if where != "" {
		return docErr("%s: %s", where, msg)
	}
	return docErr("%s", msg)
}

// jsonKind names what the format holds where a value of Go type t is decoded.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer:
		return "an object"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer"
	}
	return "a " + t.String()
}

// compatible refuses a checkpoint of another schema, or made under options that shape
// the state differently.
func (s *SimilarTask) compatible(doc *ckDoc) error {
	if why := s.schemaDiff(doc.Schema); why != "" {
		names := make([]string, len(doc.Schema))
		for i, d := range doc.Schema {
			names[i] = d.Name
		}
		return ckErr("schema", strings.Join(names, " "), resource.ErrSchemaMismatch, "%s", why)
	}
	o, own := doc.Options, s.ckOptions()
	if o.History != own.History || o.HistoryBuckets != own.HistoryBuckets {
		return ckErr("options.history", fmt.Sprintf("WithHistory(%d, %d)", o.History, o.HistoryBuckets), nil,
			"made with a history of %d observations of %d buckets; this estimator keeps %s", o.History, o.HistoryBuckets, historyOption(own))
	}
	if o.SizeBuckets != own.SizeBuckets {
		return ckErr("options.sizeBuckets", o.SizeBuckets, nil, "made %s WithSizeBuckets; this estimator %s", with(o.SizeBuckets), learnsSizes(own.SizeBuckets))
	}
	if o.Family != own.Family {
		return ckErr("options.family", o.Family, nil, "made with family learning %s (WithFamily); this estimator has it %s", onOff(o.Family), onOff(own.Family))
	}
	if !o.Family && len(doc.Families) > 0 {
		return ckErr("families", fmt.Sprintf("%d classes", len(doc.Families)), nil, "families without family learning (options.family false)")
	}
	if n := len(doc.Keys); n > s.cfg.maxKeys {
		return ckErr("keys", fmt.Sprintf("%d keys", n), nil, "more than this estimator's WithMaxKeys(%d)", s.cfg.maxKeys)
	}
	if n := len(doc.Families); s.fam != nil && n > s.fam.cfg.maxKeys {
		return ckErr("families", fmt.Sprintf("%d classes", n), nil, "more than this estimator's WithMaxKeys(%d)", s.fam.cfg.maxKeys)
	}
	return nil
}

func historyOption(o ckOptions) string {
	if o.History == 0 {
		return "none (WithHistory(0, …))"
	}
	return fmt.Sprintf("WithHistory(%d, %d)", o.History, o.HistoryBuckets)
}

func with(on bool) string {
	if on {
		return "with"
	}
	return "without"
}

func learnsSizes(buckets bool) string {
	if buckets {
		return "learns size buckets (WithSizeBuckets)"
	}
	return "learns exact sizes"
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// schemaDiff says how the checkpoint's schema differs from the estimator's; "" when it
// does not.
func (s *SimilarTask) schemaDiff(dims []ckDim) string {
	if len(dims) != s.schema.Len() {
		return fmt.Sprintf("%d dimension(s); this estimator's schema %v has %d", len(dims), s.schema, s.schema.Len())
	}
	for i, c := range dims {
		d := s.schema.Dim(i)
		switch {
		case c.Name != d.Name:
			return fmt.Sprintf("dimension %d is %q; this estimator's is %q (schema %v)", i, c.Name, d.Name, s.schema)
		case c.Unit != d.Unit:
			return fmt.Sprintf("dimension %q counts %q; this estimator's counts %q", d.Name, c.Unit, d.Unit)
		case c.Compressible != d.Compressible:
			return fmt.Sprintf("dimension %q is %scompressible; this estimator's is %scompressible", d.Name, not(c.Compressible), not(d.Compressible))
		case c.BaseUnitsPerQuantity != d.BaseUnitsPerQuantity:
			return fmt.Sprintf("dimension %q has %d base units per quantity; this estimator's %d", d.Name, c.BaseUnitsPerQuantity, d.BaseUnitsPerQuantity)
		case c.BinarySI != d.BinarySI:
			return fmt.Sprintf("dimension %q is %swritten with binary suffixes; this estimator's is %swritten with them", d.Name, not(c.BinarySI), not(d.BinarySI))
		}
	}
	return ""
}

func not(b bool) string {
	if b {
		return ""
	}
	return "not "
}

// restored is a state Restore built aside, checked, ready to install.
type restored struct {
	lru   []*entry           // least recently used first: a valid min-heap once stamped
	dirty []*entry           // entries awaiting re-division
	sizes map[string][]int64 // with WithNearestSize; nil otherwise
}

// maxAmount is the largest amount or duration a float state may hold: the int64 range,
// where the estimate's amounts saturate.
const maxAmount = float64(math.MaxInt64)

// rebuild checks the entries of section (keys, or families' classes) against s and
// builds them aside; bucketOption names the option that maps sizes to canonical ones.
func (s *SimilarTask) rebuild(section string, entries []ckEntry, bucketOption string) (*restored, error) {
	st := &restored{lru: make([]*entry, len(entries))}
	if s.sizes != nil {
		st.sizes = make(map[string][]int64)
	}
	seen := make(map[mapKey]int, len(entries))
	for i := range entries {
		c := &entries[i]
		name := func(member string) string { return fmt.Sprintf("%s[%d]%s", section, i, member) }
		e, err := s.rebuildEntry(c, name, section == "families", bucketOption)
		if err != nil {
			return nil, err
		}
		mk := mapKey{e.key.Logic, e.key.InputSize}
		if j, dup := seen[mk]; dup {
			return nil, ckErr(name(""), fmt.Sprintf("%q size %d", e.key.Logic, e.key.InputSize), nil, "the same key as %s[%d]", section, j)
		}
		seen[mk] = i
		if c.Recency < 1 || c.Recency > len(entries) {
			return nil, ckErr(name(".recency"), c.Recency, nil, "ranks run from 1 to the number of entries, %d", len(entries))
		}
		if st.lru[c.Recency-1] != nil {
			return nil, ckErr(name(".recency"), c.Recency, nil, "the same rank as another entry")
		}
		st.lru[c.Recency-1] = e
		if e.dirty {
			st.dirty = append(st.dirty, e)
		}
		if st.sizes != nil {
			st.sizes[e.key.Logic] = append(st.sizes[e.key.Logic], e.key.InputSize)
		}
	}
	for _, sz := range st.sizes {
		slices.Sort(sz)
	}
	return st, nil
}

// rebuildEntry checks one entry and builds it, without its recency. family is set for
// a family's size class, which no running task teaches.
func (s *SimilarTask) rebuildEntry(c *ckEntry, name func(string) string, family bool, bucketOption string) (*entry, error) {
	logic := c.Logic
	switch {
	case c.Logic != "" && c.LogicBytes != nil:
		return nil, ckErr(name(""), c.Logic, nil, "both logic and logicBytes")
	case c.LogicBytes != nil:
		logic = string(c.LogicBytes)
	}
	k := Key{Logic: logic, InputSize: c.Size}
	if k.Logic == "" {
		return nil, ckErr(name(".logic"), "", ErrInvalidKey, "empty")
	}
	if k.InputSize < 0 {
		return nil, ckErr(name(".size"), k.InputSize, ErrInvalidKey, "negative")
	}
	if ck := s.canon(k); ck.InputSize != k.InputSize {
		return nil, ckErr(name(".size"), k.InputSize, nil, "not a canonical size under this estimator's %s (it maps to %d): made with other size buckets", bucketOption, ck.InputSize)
	}
	n := c.Observations
	if n < 0 || n > math.MaxInt32 {
		return nil, ckErr(name(".observations"), n, nil, "out of [0, %d]", math.MaxInt32)
	}
	prof, err := s.rebuildProfile(c.Estimate, name)
	if err != nil {
		return nil, err
	}
	e := &entry{key: k}
	e.snap.Store(&snapshot{profile: prof, n: n})
	if n == 0 {
		return e, s.rebuildRunning(e, c, name, family)
	}
	if c.RunningSpan != 0 {
		return nil, ckErr(name(".runningSpan"), c.RunningSpan, nil, "a running task's report on a key observed %d time(s)", n)
	}
	if c.Learned == nil {
		return nil, ckErr(name(".learned"), "none", nil, "an observed key without its learned state")
	}
	if e.dur, e.dem, err = s.rebuildLearned(c.Learned, prof.Len(), name); err != nil {
		return nil, err
	}
	if e.hist, err = s.rebuildHistory(c.History, n, name); err != nil {
		return nil, err
	}
	if c.Redivide && e.hist == nil {
		return nil, ckErr(name(".redivide"), true, nil, "awaiting re-division without a history")
	}
	e.dirty = c.Redivide
	return e, nil
}

// rebuildProfile checks an estimate's stages and builds its profile.
func (s *SimilarTask) rebuildProfile(stages []ckStage, name func(string) string) (stage.Profile, error) {
	if len(stages) == 0 || len(stages) > stage.MaxStages {
		return stage.Profile{}, ckErr(name(".estimate"), fmt.Sprintf("%d stages", len(stages)), ErrStageCount, "an estimate has 1 to %d stages", stage.MaxStages)
	}
	dims := s.schema.Len()
	sts := make([]stage.Stage, len(stages))
	for i, c := range stages {
		if len(c.Demand) != dims {
			return stage.Profile{}, ckErr(name(fmt.Sprintf(".estimate[%d].demand", i)), fmt.Sprintf("%d amounts", len(c.Demand)), nil, "one amount per dimension of the schema, %d", dims)
		}
		if c.Duration <= 0 {
			return stage.Profile{}, ckErr(name(fmt.Sprintf(".estimate[%d].duration", i)), c.Duration, ErrBadDuration, "not positive")
		}
		sts[i].Duration = time.Duration(c.Duration)
		for d, x := range c.Demand {
			if x < 0 {
				return stage.Profile{}, ckErr(name(fmt.Sprintf(".estimate[%d].demand[%d]", i, d)), x, resource.ErrNegative, "a negative %s", s.schema.DimName(d))
			}
			sts[i].Demand[d] = x
		}
	}
	p, err := stage.NewProfile(s.schema, sts...)
	if err != nil { // cannot happen: checked above
		return stage.Profile{}, ckErr(name(".estimate"), "", nil, "%v", err)
	}
	return p, nil
}

// rebuildRunning checks an entry made from a running task's report: e holds its
// estimate, which must be open-ended (its stages so far, then one lasting until
// stage.Forever at their peak).
func (s *SimilarTask) rebuildRunning(e *entry, c *ckEntry, name func(string) string, family bool) error {
	switch {
	case family:
		return ckErr(name(".observations"), 0, nil, "a family's size class learns from finished tasks only")
	case c.Learned != nil || c.History != nil || c.Redivide:
		return ckErr(name(".learned"), "present", nil, "a key known from a running task's report only (0 observations) has no learned state, history or re-division")
	case c.RunningSpan <= 0:
		return ckErr(name(".runningSpan"), c.RunningSpan, ErrBadDuration, "a key known from a running task's report only (0 observations) needs its positive span")
	}
	p := e.snap.Load().profile
	last := p.Stage(p.Len() - 1)
	if p.Len() < 2 || last.Duration != stage.Forever {
		return ckErr(name(".estimate"), p.String(), nil, "a running task's estimate ends with an open-ended stage (duration %d)", int64(stage.Forever))
	}
	var before time.Duration
	for i := 0; i < p.Len()-1; i++ {
		st := p.Stage(i)
		if !last.Demand.Covers(st.Demand) {
			return ckErr(name(fmt.Sprintf(".estimate[%d].demand", i)), s.schema.Format(st.Demand), nil, "above the open-ended stage's %s, which holds the peak", s.schema.Format(last.Demand))
		}
		before = stage.AddSat(before, st.Duration)
	}
	if time.Duration(c.RunningSpan) < before {
		return ckErr(name(".runningSpan"), c.RunningSpan, nil, "shorter than the stages it ran, %d ns", int64(before))
	}
	e.span = time.Duration(c.RunningSpan)
	return nil
}

// rebuildLearned checks the iterative update's state of m stages.
func (s *SimilarTask) rebuildLearned(l *ckLearned, m int, name func(string) string) ([]float64, []resource.Vector, error) {
	if len(l.Durations) != m || len(l.Demands) != m {
		return nil, nil, ckErr(name(".learned"), fmt.Sprintf("%d durations and %d demands", len(l.Durations), len(l.Demands)), ErrStageCount, "the estimate has %d stages", m)
	}
	dims := s.schema.Len()
	dur := make([]float64, m)
	dem := make([]resource.Vector, m)
	for i, x := range l.Durations {
		if !plausibleAmount(x) {
			return nil, nil, ckErr(name(fmt.Sprintf(".learned.durations[%d]", i)), x, ErrInvalidValue, "a duration is finite, not negative and within the int64 range")
		}
		dur[i] = x + 0 // no negative zero
	}
	for i, v := range l.Demands {
		if len(v) != dims {
			return nil, nil, ckErr(name(fmt.Sprintf(".learned.demands[%d]", i)), fmt.Sprintf("%d amounts", len(v)), nil, "one amount per dimension of the schema, %d", dims)
		}
		for d, x := range v {
			if !plausibleAmount(x) {
				return nil, nil, ckErr(name(fmt.Sprintf(".learned.demands[%d][%d]", i, d)), x, ErrInvalidValue, "an amount is finite, not negative and within the int64 range")
			}
			dem[i][d] = x + 0
		}
	}
	return dur, dem, nil
}

// plausibleAmount reports whether x is a number in [0, maxAmount] (not NaN).
func plausibleAmount(x float64) bool { return x >= 0 && x <= maxAmount }

// rebuildHistory checks the history of a key observed n times and builds it: nil
// without WithHistory.
func (s *SimilarTask) rebuildHistory(obs []ckObs, n int, name func(string) string) (*history, error) {
	k, b, dims := s.cfg.history, s.cfg.buckets, s.schema.Len()
	if k == 0 {
		if len(obs) > 0 {
			return nil, ckErr(name(".history"), fmt.Sprintf("%d observations", len(obs)), nil, "a history without WithHistory")
		}
		return nil, nil
	}
	if want := min(n, k); len(obs) != want {
		return nil, ckErr(name(".history"), fmt.Sprintf("%d observations", len(obs)), nil,
			"a key observed %d time(s) holds the last %d under WithHistory(%d, %d)", n, want, k, b)
	}
	h := restoredHistory(k, b, dims, len(obs))
	for i, o := range obs {
		if o.Stages < 1 || o.Stages > stage.MaxStages {
			return nil, ckErr(name(fmt.Sprintf(".history[%d].stages", i)), o.Stages, ErrStageCount, "an observation has 1 to %d stages", stage.MaxStages)
		}
		if !(o.Compression >= 0 && o.Compression <= 1) {
			return nil, ckErr(name(fmt.Sprintf(".history[%d].compression", i)), o.Compression, resource.ErrInvalidRatio, "a compression ratio is in [0, 1]")
		}
		h.count[i], h.rcObs[i] = int32(o.Stages), o.Compression+0
		j := 0 // next bucket
		for r, run := range o.Buckets {
			at := func(member string) string { return name(fmt.Sprintf(".history[%d].buckets[%d]%s", i, r, member)) }
			if run.Count < 1 || run.Count > b-j {
				return nil, ckErr(at(".count"), run.Count, nil, "a run covers 1 to the %d bucket(s) left of %d", b-j, b)
			}
			if len(run.Peak) != dims {
				return nil, ckErr(at(".peak"), fmt.Sprintf("%d amounts", len(run.Peak)), nil, "one amount per dimension of the schema, %d", dims)
			}
			for d, x := range run.Peak {
				if x < 0 {
					return nil, ckErr(at(fmt.Sprintf(".peak[%d]", d)), x, resource.ErrNegative, "a negative %s", s.schema.DimName(d))
				}
			}
			if rc := run.Compression; !(rc >= 0 && rc <= 1) {
				return nil, ckErr(at(".compression"), rc, resource.ErrInvalidRatio, "a compression ratio is in [0, 1]")
			}
			for ; run.Count > 0; run.Count-- {
				copy(h.peak[(i*b+j)*dims:], run.Peak)
				h.rc[i*b+j] = run.Compression + 0
				j++
			}
		}
		if j != b {
			return nil, ckErr(name(fmt.Sprintf(".history[%d].buckets", i)), fmt.Sprintf("%d buckets", j), nil, "an observation covers all %d buckets", b)
		}
	}
	return h, nil
}

// installLocked swaps st in as s's state: every entry st holds replaces the one of its
// key, the others are dropped, and all the old entries are marked gone so that Refs
// look their keys up again. The caller holds s.mu for writing.
func (s *SimilarTask) installLocked(st *restored) {
	// Ticks of the shared clock for the restored use order, after any tick given so
	// far: an Estimate racing with the swap stamps a restored entry as used last.
	n := uint64(len(st.lru))
	base := s.clock.Add(n) - n
	for i, e := range st.lru {
		e.stamp, e.index = base+uint64(i)+1, i
		e.used.Store(e.stamp)
	}
	for _, e := range st.lru {
		s.entries.Store(mapKey{e.key.Logic, e.key.InputSize}, e)
	}
	for _, e := range s.lru {
		if s.load(e.key) == e { // not replaced
			s.entries.Delete(mapKey{e.key.Logic, e.key.InputSize})
		}
		e.gone.Store(true)
		e.hist = nil
	}
	s.inserts.Add(1) // after the stores: a Ref without an entry looks again
	s.lru, s.count, s.dirty = st.lru, len(st.lru), st.dirty
	if s.sizes != nil {
		s.sizes = st.sizes
	}
}
