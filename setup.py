"""cogen_lib's setup: every setting, dependencies included, is read from settings.ini (nbdev's one source of truth).
`requirements` -> install_requires; each `<name>_requirements` -> the extra `<name>` (nbdev's own setup.py does this for
`dev_requirements` only), and `all` -> every extra. The exact versions tested are in requirements.txt (the lock file
`make install` uses)."""
from configparser import ConfigParser
from setuptools import setup, find_packages

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']
NOT_EXTRAS = ('requirements', 'pip_requirements', 'conda_requirements')   # nbdev's keys for the core (pip, conda)
requirements = cfg.get('requirements', '').split() + cfg.get('pip_requirements', '').split()
extras = {k[:-len('_requirements')]: cfg[k].split() for k in cfg if k.endswith('_requirements') and k not in NOT_EXTRAS}
extras['all'] = sorted({r for reqs in extras.values() for r in reqs})
setup(
    name=cfg['lib_name'], version=cfg['version'], description=cfg['description'],
    long_description=open('README.md', encoding='utf-8').read(), long_description_content_type='text/markdown',
    author=cfg['author'], author_email=cfg['author_email'], license='Apache-2.0',
    keywords=cfg['keywords'].split(), python_requires='>=' + cfg['min_python'],
    install_requires=requirements, extras_require=extras,
    packages=find_packages(include=['cogen_lib', 'cogen_lib.*']), include_package_data=True,
    entry_points={'console_scripts': cfg['console_scripts'].split(), 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    zip_safe=False,
)
