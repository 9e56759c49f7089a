/* SPDX-License-Identifier: Apache-2.0 */
/*
 * page_assets: the page's files (daemon/agent/page/), embedded in the binary at build time, so
 * the agent serves its page with no file on disk and no network (daemon/agent/page.h). Each
 * asset NAME is NAME[] followed by a NUL byte, and NAME_len its size without the NUL. Paths are
 * relative to the top of the tree, where make runs.
 */
	.macro asset name, file
	.section .rodata.page,"a",@progbits
	.global \name
	.type \name, @object
	.balign 16
\name:
	.incbin "\file"
\name\()_end:
	.byte 0
	.size \name, \name\()_end - \name
	.global \name\()_len
	.type \name\()_len, @object
	.balign 8
\name\()_len:
	.quad \name\()_end - \name
	.size \name\()_len, 8
	.endm

	asset page_index_html, "daemon/agent/page/index.html"
	asset page_app_js, "daemon/agent/page/app.js"
	asset page_app_css, "daemon/agent/page/app.css"

	.section .note.GNU-stack,"",@progbits
