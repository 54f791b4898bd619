package templates

func (m *model) arduinoFiles() (map[string][]byte, error) { return nil, nil }
func (m *model) bazelFiles() (map[string][]byte, error)   { return nil, nil }
