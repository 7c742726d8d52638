" Syntax highlighting for the Legion mapper DSL (every token class of its
" lexer: keywords by group, names, integers, strings, operators, comments).
if exists('b:current_syntax')
  finish
endif

syn case match

" Anything the lexer rejects ("Unrecognized character"); defined first so that
" every other item wins.
syn match mapperError /[^ \t\r\x07a-zA-Z0-9_"#\/*%+\-=,;!?:<>(){}.\[\]&|]/

syn keyword mapperStatement Task Region Layout InstanceLimit CollectMemory IndexTaskMap SingleTaskMap ControlReplicate
syn keyword mapperConstraint F_order C_order AOS SOA Compact Align Exact
syn keyword mapperProperty size split merge swap slice reverse balance_split auto_split greedy_split volume has len ipoint ispace parent processor
syn keyword mapperProcKind CPU GPU IO PY PROC OMP
syn keyword mapperMemKind SYSMEM FBMEM RDMEM ZCMEM SOCKMEM VIRTUAL
syn keyword mapperType int bool IPoint ISpace MSpace
syn keyword mapperBoolean True False
syn keyword mapperDefine def
syn keyword mapperReturn return
syn keyword mapperRepeat for in
syn keyword mapperBuiltin tuple print

syn match mapperMachine /\<Machine\>\ze\s*(/
syn match mapperFunctionName /\%(\<def\s\+\)\@<=\h\w*/
syn match mapperNumber /\<\d\+/
syn match mapperOperator /&&\|||\|[=!<>]=\|[-+*\/%=<>!?:]/
syn match mapperDelimiter /[;,.]/

syn region mapperString start=/"/ end=/"/ end=/$/ oneline contains=mapperPlaceholder
syn match mapperPlaceholder /{}/ contained

syn keyword mapperTodo TODO FIXME XXX NOTE contained
syn match mapperComment /#.*$/ contains=mapperTodo,@Spell
syn match mapperComment /\/\/.*$/ contains=mapperTodo,@Spell

hi def link mapperStatement Statement
hi def link mapperConstraint Constant
hi def link mapperProperty Function
hi def link mapperProcKind Constant
hi def link mapperMemKind Constant
hi def link mapperType Type
hi def link mapperBoolean Boolean
hi def link mapperDefine Define
hi def link mapperReturn Statement
hi def link mapperRepeat Repeat
hi def link mapperBuiltin Function
hi def link mapperMachine Function
hi def link mapperFunctionName Function
hi def link mapperNumber Number
hi def link mapperOperator Operator
hi def link mapperDelimiter Delimiter
hi def link mapperString String
hi def link mapperPlaceholder SpecialChar
hi def link mapperTodo Todo
hi def link mapperComment Comment
hi def link mapperError Error

let b:current_syntax = 'mapper'
