// Package strictjson decodes request bodies strictly (conventions §1): every member the
// target type does not know, every value of the wrong JSON type and every null given for
// a field that is not nullable is a fault, named under its dot path, and every fault of a
// body is found in one pass. data.Opt members tell a given member from an absent one;
// strict:"nonnull", strict:"readonly" and strict:"required" tags refine what a field accepts. Rules about
// the values themselves live in validate.
package strictjson
