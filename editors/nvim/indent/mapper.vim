" Legion mapper DSL: indent after an opening `{`, `(` or `[` at the end of a
" line (a `def` body), outdent a line that starts with the closing one.
if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal autoindent
setlocal indentexpr=MapperIndent(v:lnum)
setlocal indentkeys=0},0),0],!^F,o,O
let b:undo_indent = 'setlocal autoindent< indentexpr< indentkeys<'

if exists('*MapperIndent')
  finish
endif

function! MapperIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  if prev == 0
    return 0
  endif
  " The previous line without its comment (good enough: `#` and `//` do not
  " occur in the DSL's strings in practice).
  let code = substitute(getline(prev), '\s*\(#\|//\).*$', '', '')
  let ind = indent(prev)
  if code =~# '[{(\[]\s*$'
    let ind += shiftwidth()
  endif
  if getline(a:lnum) =~# '^\s*[})\]]'
    let ind -= shiftwidth()
  endif
  return ind < 0 ? 0 : ind
endfunction
