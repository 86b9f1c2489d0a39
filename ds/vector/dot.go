package vector

// Dot is the dot product of two float32 vectors of the same length, on the index's kernel (AVX2
// where the CPU has it): for callers that score stored vectors themselves (ds/agentmem's exact
// path over a pre-filtered candidate set).
func Dot(a, b []float32) float32 { return kern.dot(a, b) }
