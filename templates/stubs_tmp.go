package templates

func (m *model) bazelFiles() (map[string][]byte, error) { return nil, nil }
