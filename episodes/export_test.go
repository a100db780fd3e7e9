package episodes

// CaptureNamespace seeds captured event ids (tests derive the ids of
// earlier releases with it).
var CaptureNamespace = captureNamespace
