// The source of the precompiled-header targets: they compile nothing else.
