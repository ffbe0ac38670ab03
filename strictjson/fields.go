package strictjson

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// The struct tags the decoder honours, read once per type.

// missingRequired faults each member of t tagged strict:"required" that ms (sorted by
// key) lacks: a member whose zero value is also a valid value (a weight of 0, a threshold
// of 0, an empty list), so that leaving it out cannot silently mean that value.
func missingRequired(d *decoder, ms []member, t reflect.Type) {
	for _, name := range requiredOf(t) {
		_, found := slices.BinarySearchFunc(ms, name, func(m member, name string) int { return strings.Compare(string(m.key), name) })
		if !found {
			d.pushKey([]byte(name))
			d.fault("The %s field is required.")
			d.pop()
		}
	}
}

var requiredCache sync.Map // reflect.Type → []string, sorted

// requiredOf lists the JSON names of t's fields tagged strict:"required", sorted.
func requiredOf(t reflect.Type) []string {
	if r, ok := requiredCache.Load(t); ok {
		return r.([]string)
	}
	var names []string
	for name, f := range fieldsOf(t) {
		if f.required {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	requiredCache.Store(t, names)
	return names
}

var fieldCache sync.Map // reflect.Type → map[string]fieldInfo

// fieldInfo locates a struct field and says whether null is refused for it
// (strict:"nonnull"), whether the member may not be given at all (strict:"readonly"), or
// whether it must be given (strict:"required").
type fieldInfo struct {
	index    []int
	nonNull  bool
	readOnly bool
	required bool
}

// fieldsOf maps JSON member names to struct fields, following embedded structs.
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	m := map[string]fieldInfo{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		tag := f.Tag.Get("strict")
		m[name] = fieldInfo{index: f.Index, nonNull: tag == "nonnull", readOnly: tag == "readonly", required: tag == "required"}
	}
	fieldCache.Store(t, m)
	return m
}
