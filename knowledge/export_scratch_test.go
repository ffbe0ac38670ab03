package knowledge

func SetBackgroundSource(on bool) { bgSource = on }

func SetExpansion(w float64, k int, minCos float64) {
	expandWeight, expandK, expandMinCos = w, k, minCos
}
