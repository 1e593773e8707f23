"Minimal setup for cogen_lib; runtime dependencies are pinned in requirements.txt (installed by the Makefile)."
from configparser import ConfigParser
from setuptools import setup, find_packages

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']
setup(
    name=cfg['lib_name'], version=cfg['version'], description=cfg['description'],
    author=cfg['author'], license=cfg['license'], python_requires='>=' + cfg['min_python'],
    packages=find_packages(include=['cogen_lib', 'cogen_lib.*']), include_package_data=True,
    entry_points={'console_scripts': [cfg['console_scripts']], 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    zip_safe=False,
)
