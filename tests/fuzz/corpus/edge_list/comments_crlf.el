# comment
% another

0	1
  3 2  
