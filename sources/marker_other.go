//go:build !unix

package sources

// markExtracting keeps no marker where files are not locked: a killed
// extraction is not remembered there.
func markExtracting(string) (done func()) { return func() {} }

// deadMarker reports no dead marker where none are kept.
func deadMarker(string) (string, bool) { return "", false }
