package fairness

import (
	"container/heap"
	"fmt"

	"github.com/finegrain/finegrain/resource"
)

// User is one user of ProgressiveFilling: the demand of each of its tasks, its weight and
// how many tasks it wants.
type User struct {
	// Task is the demand of one task.
	Task resource.Tuple
	// Weight is the user's weight; positive and finite.
	Weight float64
	// Tasks is how many tasks the user wants; 0 means as many as fit.
	Tasks int
}

// ProgressiveFilling is weighted DRF's allocation (Ghodsi et al., NSDI 2011, Alg. 1):
// repeatedly launch one task of the user with the lowest weighted dominant share whose
// task still fits in what is left of capacity, until no user's task fits or every user
// has all the tasks it wants. Ties go as the DRF policy breaks them: the next-largest
// weighted share, then user order. It returns the number of tasks each user gets.
//
// The DRF paper's example: capacity ⟨9 CPU, 18 GB⟩, user A's tasks ⟨1 CPU, 4 GB⟩ and
// user B's ⟨3 CPU, 1 GB⟩ give A 3 tasks and B 2.
//
// It costs O(T log n) for T tasks launched. It fails on a nil schema, an invalid capacity
// or task, a bad weight, a negative Tasks, or a zero task with Tasks 0 (it would never
// stop).
func ProgressiveFilling(schema *resource.Schema, capacity resource.Tuple, users []User) ([]int, error) {
	if schema == nil {
		return nil, fmt.Errorf("fairness: nil schema: %w", resource.ErrSchemaMismatch)
	}
	if err := schema.Validate(capacity); err != nil {
		return nil, fieldErr("capacity", capacity, err)
	}
	for i, u := range users {
		err := (Share{Weight: u.Weight}).validate()
		if err == nil {
			if terr := schema.Validate(u.Task); terr != nil {
				err = fieldErr("task", u.Task, terr)
			} else if u.Tasks < 0 || (u.Tasks == 0 && u.Task.IsZero()) {
				err = fieldErr("tasks", u.Tasks, ErrInvalidCount)
			}
		}
		if err != nil {
			return nil, within(fmt.Sprintf("user %d", i), err)
		}
	}
	h := &drfHeap{}
	for i, u := range users {
		h.users = append(h.users, drfUser{i: i, e: Entry{Kind: KindJob, Share: Share{Weight: u.Weight}}})
	}
	for i := range h.users {
		h.users[i].key = DRF{}.Key(&h.users[i].e, capacity)
	}
	heap.Init(h)
	free := capacity
	got := make([]int, len(users))
	for h.Len() > 0 {
		u := &h.users[0]
		spec := users[u.i]
		if (spec.Tasks > 0 && got[u.i] >= spec.Tasks) || !free.Covers(spec.Task) {
			heap.Pop(h) // saturated: everything it wants, or no room for its next task
			continue
		}
		free = free.Sub(spec.Task)
		got[u.i]++
		u.e.Usage = u.e.Usage.Add(spec.Task)
		u.key = DRF{}.Key(&u.e, capacity)
		heap.Fix(h, 0)
	}
	return got, nil
}

type drfUser struct {
	i   int
	e   Entry
	key OrderKey
}

type drfHeap struct {
	users []drfUser
}

func (h *drfHeap) Len() int { return len(h.users) }
func (h *drfHeap) Less(a, b int) bool {
	if c := h.users[a].key.Compare(h.users[b].key); c != 0 {
		return c < 0
	}
	return h.users[a].i < h.users[b].i
}
func (h *drfHeap) Swap(a, b int) { h.users[a], h.users[b] = h.users[b], h.users[a] }
func (h *drfHeap) Push(x any)    { h.users = append(h.users, x.(drfUser)) }
func (h *drfHeap) Pop() any {
	last := h.users[len(h.users)-1]
	h.users = h.users[:len(h.users)-1]
	return last
}
