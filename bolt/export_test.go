package bolt

// SetTestHookBeforeSourceCommit lets the external tests stop a process between writing a
// source's file and committing its metadata.
func SetTestHookBeforeSourceCommit(fn func()) { testHookBeforeSourceCommit = fn }
