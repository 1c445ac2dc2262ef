package dirarchive

// KernelAtLeast is exported for tests.
var KernelAtLeast = kernelAtLeast
