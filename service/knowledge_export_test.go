package service

// CachedIndexes is how many retrieval indexes the knowledge base service holds, for the
// external tests.
func (s *KnowledgeBaseService) CachedIndexes() int { return s.kbIndexes.len() }
