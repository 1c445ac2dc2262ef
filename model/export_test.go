package model

// DecodeFastAndSlow decodes data, as Decode would see it, both ways: fast
// is nil where decodeFast leaves the event to decodeSlow.
func DecodeFastAndSlow(data []byte, opt DecodeOptions) (fast, slow *Event, slowErr error) {
	data, lead := trimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, nil, nil
	}
	slow, slowErr = decodeSlow(data, lead, opt)
	return decodeFast(data), slow, slowErr
}
