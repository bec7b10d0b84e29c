# Doxygen's input filter (docs/Doxyfile.in): minigrad's headers comment declarations with //, as its style
# asks. A line that starts with // becomes ///, so that Doxygen takes each run of them as the
# documentation of what follows, with the characters Doxygen would read as commands or HTML escaped.
/^[[:space:]]*\/\/\( \|$\)/{
  s|\\|\\\\|g
  s|<|\\<|g
  s|>|\\>|g
  s|#|\\#|g
  s|@|\\@|g
  s|%|\\%|g
  s|^\([[:space:]]*\)//|\1///|
}
