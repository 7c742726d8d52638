" Legion mapper DSL files: *.mapper, *.mappings, mappings, *_mappings.
autocmd BufRead,BufNewFile *.mapper,*.mappings,mappings,*_mappings setfiletype mapper
