"""The core's tests, grouped as the core is (golden/, retrieval/, scoring/, storage/); `core_helpers`
beside this file is importable from every group."""
